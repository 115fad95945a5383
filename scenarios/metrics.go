package scenarios

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/rs/zerolog"

	"hgpsim/optim"
)

// Aggregate is the across-client view of one evaluated round.
type Aggregate struct {
	TrainLoss float64 `json:"train_loss"` // mean over clients
	TrainAcc  float64 `json:"train_acc"`  // mean over clients
	ValAcc    float64 `json:"val_acc"`    // weighted by local validation size
	TestAcc   float64 `json:"test_acc"`   // weighted by local test size
	TestAccP  float64 `json:"test_acc_p10"`
	Consensus float64 `json:"consensus"`            // sqrt(1/n Σ‖x_i − x̄‖²)
	OuterLoss float64 `json:"outer_loss,omitempty"` // F̄ = (1/n) Σ F_i(x_i, λ_i)
}

// aggregate summarizes stats in client order (fixed, so deterministic).
func aggregate(stats []optim.Stats, valN, testN []int) Aggregate {
	n := len(stats)
	var a Aggregate
	var vw, tw float64
	accs := make([]float64, 0, n)
	for i, s := range stats {
		a.TrainLoss += s.TrainLoss
		a.TrainAcc += s.TrainAcc
		a.OuterLoss += s.OuterLoss
		a.ValAcc += s.ValAcc * float64(valN[i])
		vw += float64(valN[i])
		a.TestAcc += s.TestAcc * float64(testN[i])
		tw += float64(testN[i])
		if testN[i] > 0 {
			accs = append(accs, s.TestAcc)
		}
	}
	if n > 0 {
		a.TrainLoss /= float64(n)
		a.TrainAcc /= float64(n)
		a.OuterLoss /= float64(n)
	}
	if vw > 0 {
		a.ValAcc /= vw
	}
	if tw > 0 {
		a.TestAcc /= tw
	}
	a.TestAccP = percentile(accs, 0.1)
	a.Consensus = consensus(stats)
	return a
}

// percentile returns the q-quantile by linear interpolation between order
// statistics (the usual "type 7" definition); NaN for no data.
func percentile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	hi := int(math.Ceil(h))
	return s[lo] + (h-float64(lo))*(s[hi]-s[lo])
}

func consensus(stats []optim.Stats) float64 {
	if len(stats) == 0 || stats[0].X == nil {
		return 0
	}
	d := len(stats[0].X)
	mean := make([]float64, d)
	for _, s := range stats {
		for k, v := range s.X {
			mean[k] += v
		}
	}
	for k := range mean {
		mean[k] /= float64(len(stats))
	}
	var ss float64
	for _, s := range stats {
		for k, v := range s.X {
			ss += (v - mean[k]) * (v - mean[k])
		}
	}
	return math.Sqrt(ss / float64(len(stats)))
}

// metricsWriter writes one JSON object per line: a line per client and one
// aggregate line per evaluated round. No timestamps: the file must be
// byte-identical across runs with the same seed. zerolog hands each line
// to the writer in one Write call; with an unbuffered file that is one
// write(2) per line, so a run killed at any moment (even by SIGKILL) loses
// at most the line being written and never corrupts an earlier one.
type metricsWriter struct {
	log   zerolog.Logger
	outer int   // current outer step, written on every line
	err   error // the first write error
}

func newMetricsWriter(w io.Writer) *metricsWriter {
	m := &metricsWriter{}
	m.log = zerolog.New(&errWriter{w: w, err: &m.err})
	return m
}

// errWriter keeps the first write error, which zerolog would only print:
// a run whose metrics could not be written fails instead of losing lines.
type errWriter struct {
	w   io.Writer
	err *error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && *e.err == nil {
		*e.err = err
	}
	return n, err
}

func (m *metricsWriter) round(ev optim.RoundEvent, agg Aggregate) {
	for i, s := range ev.Clients {
		e := m.log.Log().Int("outer", m.outer).Str("phase", ev.Phase).Int("round", ev.Round).Int("client", i)
		num(e, "train_loss", s.TrainLoss)
		num(e, "train_acc", s.TrainAcc)
		num(e, "val_loss", s.ValLoss)
		num(e, "val_acc", s.ValAcc)
		num(e, "test_loss", s.TestLoss)
		num(e, "test_acc", s.TestAcc)
		e.Send()
	}
	e := m.log.Log().Int("outer", m.outer).Str("phase", ev.Phase).Int("round", ev.Round).Str("client", "all")
	num(e, "train_loss", agg.TrainLoss)
	num(e, "train_acc", agg.TrainAcc)
	num(e, "val_acc", agg.ValAcc)
	num(e, "test_acc", agg.TestAcc)
	num(e, "test_acc_p10", agg.TestAccP)
	num(e, "consensus", agg.Consensus)
	e.Int64("messages", ev.Traffic.Messages).Int64("bytes", ev.Traffic.Bytes).Send()
}

// num writes a number, or null when it is not finite: JSON has no NaN or
// Inf, and a string in a numeric field breaks every reader. (Runs stop at
// a non-finite loss, see checkStats; null remains for undefined values
// such as a percentile over no clients.)
func num(e *zerolog.Event, key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		e.RawJSON(key, []byte("null"))
		return
	}
	e.Float64(key, v)
}

// checkStats fails a round whose evaluation produced a non-finite loss or
// estimate, naming the client, phase and round: a diverged run stops in
// the round its values overflow, and no non-number reaches metrics.jsonl.
func checkStats(ev optim.RoundEvent) error {
	for i, s := range ev.Clients {
		for _, f := range []struct {
			name string
			v    float64
		}{{"train loss", s.TrainLoss}, {"validation loss", s.ValLoss}, {"test loss", s.TestLoss}, {"outer loss", s.OuterLoss}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				return &optim.ClientError{Client: i, Phase: ev.Phase, Round: ev.Round,
					Err: fmt.Errorf("%w: the %s is %v (the iterates diverged; lower the step size)", optim.ErrNonFinite, f.name, f.v)}
			}
		}
		for k, v := range s.Hyper {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &optim.ClientError{Client: i, Phase: ev.Phase, Round: ev.Round,
					Err: fmt.Errorf("%w: hyper-gradient coordinate %d is %v", optim.ErrNonFinite, k, v)}
			}
		}
	}
	return nil
}

// hyper writes the hyper-gradient phase: one line per client with its
// estimate and an aggregate line with the traffic.
func (m *metricsWriter) hyper(ev optim.RoundEvent) {
	var norm float64
	for i, s := range ev.Clients {
		m.log.Log().Int("outer", m.outer).Str("phase", ev.Phase).Int("round", ev.Round).Int("client", i).
			Floats64("hypergradient", s.Hyper).Send() // finite: checkStats ran
		for _, v := range s.Hyper {
			norm += v * v
		}
	}
	e := m.log.Log().Int("outer", m.outer).Str("phase", ev.Phase).Int("round", ev.Round).Str("client", "all")
	num(e, "hypergradient_norm", math.Sqrt(norm))
	e.Int64("messages", ev.Traffic.Messages).Int64("bytes", ev.Traffic.Bytes).Send()
}
