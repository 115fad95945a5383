package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"hgpsim/optim"
	"hgpsim/run"
)

// newConsoleLog is the logger of `hgpsim run` on stderr. The fields that
// locate a line come first, in the order metrics.jsonl uses.
func newConsoleLog(w io.Writer) zerolog.Logger {
	cw := zerolog.ConsoleWriter{Out: w, NoColor: true, TimeFormat: time.TimeOnly,
		FieldsOrder: []string{"phase", "outer", "round", "done"}}
	return zerolog.New(cw).With().Timestamp().Logger()
}

// progressPrinter shows the evaluated rounds of a run: a log line each, or
// on a terminal a bar for the SGP rounds. It prints the same 0-based round
// index and outer step as the line of metrics.jsonl for that round, and
// the rounds done so far of the phase separately.
//
// Events come from the driver's goroutine and notices from the signal
// handler's, hence the mutex.
type progressPrinter struct {
	mu      sync.Mutex
	log     zerolog.Logger
	w       io.Writer
	tty     bool
	outer   bool // the scenario has an outer loop; show the step
	step    int  // the current outer step
	barOpen bool // a bar is on the current line
}

func newProgressPrinter(log zerolog.Logger, w io.Writer, tty, outer bool) *progressPrinter {
	return &progressPrinter{log: log, w: w, tty: tty, outer: outer}
}

// event is a run.Progress.
func (p *progressPrinter) event(ev optim.RoundEvent, agg run.Aggregate, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step = ev.Step
	training := agg != (run.Aggregate{}) // a round of losses and accuracies
	done := fmt.Sprintf("%d/%d", ev.Round+1, total)
	if training && p.tty {
		p.drawBar(ev.Round, total, agg)
		return
	}
	p.endBar()
	e := p.log.Info().Str("phase", ev.Phase)
	if p.outer {
		e = e.Int("outer", p.step)
	}
	e = e.Int("round", ev.Round).Str("done", done)
	if !training {
		e.Int64("messages", ev.Traffic.Messages).Msg("progress")
		return
	}
	// What no client measured is left out, as in metrics.jsonl.
	if agg.TrainClients > 0 {
		e = e.Float64("train_loss", agg.TrainLoss)
	}
	if agg.TestRows > 0 {
		e = e.Float64("test_acc", agg.TestAcc)
	}
	if agg.ConsensusMeasured() {
		e = e.Float64("consensus", agg.Consensus)
	}
	e.Msg("progress")
}

// drawBar redraws the bar line for SGP round (0-based) of total.
func (p *progressPrinter) drawBar(round, total int, agg run.Aggregate) {
	const width = 30
	done := round + 1
	k := min(done*width/max(total, 1), width)
	step := ""
	if p.outer {
		step = fmt.Sprintf("outer %d ", p.step)
	}
	fmt.Fprintf(p.w, "\r[%s%s] %sround %d done %d/%d  loss %.4f  test acc %.3f  consensus %.2e ",
		strings.Repeat("#", k), strings.Repeat(".", width-k), step, round, done, total, agg.TrainLoss, agg.TestAcc, agg.Consensus)
	p.barOpen = true
}

// notice prints something else than progress (through print), on a line
// of its own.
func (p *progressPrinter) notice(print func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endBar()
	print()
}

// finish ends the bar's line, if one is open.
func (p *progressPrinter) finish() { p.notice(func() {}) }

// endBar ends the bar's line, so that what follows starts on a new one.
// The caller holds p.mu.
func (p *progressPrinter) endBar() {
	if p.barOpen {
		fmt.Fprintln(p.w)
		p.barOpen = false
	}
}

// logFinished logs the headline of a completed run. The best step and λ
// are only meaningful with an outer loop: without one, Summary.Best is
// the single evaluation and λ never moves.
func logFinished(log zerolog.Logger, sum *run.Summary, wall time.Duration, dir string) {
	e := log.Info().Str("wall", wall.Round(time.Millisecond).String())
	if sum.Experiment != nil {
		e.Str("out", dir).Msg("run finished")
		return
	}
	e = e.Float64("train_loss", sum.Final.TrainLoss).Float64("test_acc", sum.Final.TestAcc).
		Float64("test_acc_p10", sum.Final.TestAccP).Float64("consensus", sum.Final.Consensus)
	if len(sum.Outer) > 0 && sum.Best != nil {
		e = e.Int("outer_steps", len(sum.Outer)-1).Int("best_step", sum.Best.Step).
			Float64("best_val_acc", sum.Best.ValAcc).Float64("best_test_acc", sum.Best.TestAcc).
			Float64("best_test_acc_p10", sum.Best.TestAccP).
			Float64("lambda_norm", sum.Outer[len(sum.Outer)-1].LambdaNorm)
	}
	e.Str("summary", dir+"/summary.json").Msg("run finished")
}
