package run

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"math"

	"github.com/rs/zerolog"

	"hgpsim/optim"
)

// metricsWriter writes one JSON object per line: a line per client and one
// aggregate line per evaluated round. No timestamps: the file must be
// byte-identical across runs with the same seed. zerolog hands each line
// to the writer in one Write call; with an unbuffered file that is one
// write(2) per line, so a run killed at any moment (even by SIGKILL) loses
// at most the line being written and never corrupts an earlier one.
type metricsWriter struct {
	log zerolog.Logger
	out *errWriter
	err error // the first write error
}

// newMetricsWriter writes to w, which already holds written bytes whose
// SHA-256 is h (a fresh hash for an empty file): a resumed run appends.
func newMetricsWriter(w io.Writer, written int64, h hash.Hash) *metricsWriter {
	m := &metricsWriter{}
	m.out = &errWriter{w: w, err: &m.err, n: written, h: h}
	m.log = zerolog.New(m.out)
	return m
}

// position returns the bytes written so far and their SHA-256, which a
// checkpoint records so that a resumed run can check the file it appends
// to.
func (m *metricsWriter) position() (int64, [sha256.Size]byte) {
	var sum [sha256.Size]byte
	m.out.h.Sum(sum[:0])
	return m.out.n, sum
}

// errWriter keeps the first write error, which zerolog would only print:
// a run whose metrics could not be written fails instead of losing lines.
// It counts and hashes what it wrote.
type errWriter struct {
	w   io.Writer
	err *error
	n   int64
	h   hash.Hash
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	e.n += int64(n)
	e.h.Write(p[:n])
	if err != nil && *e.err == nil {
		*e.err = err
	}
	return n, err
}

func (m *metricsWriter) round(ev optim.RoundEvent, agg Aggregate) {
	for i, s := range ev.Clients {
		e := m.log.Log().Int("outer", ev.Step).Str("phase", ev.Phase).Int("round", ev.Round).Int("client", i)
		// A split the client did not evaluate is left out, never 0
		// (docs/metrics.md).
		if s.TrainN > 0 {
			num(e, "train_loss", s.TrainLoss)
			num(e, "train_acc", s.TrainAcc)
		}
		if s.ValN > 0 {
			num(e, "val_loss", s.ValLoss)
			num(e, "val_acc", s.ValAcc)
		}
		if s.TestN > 0 {
			num(e, "test_loss", s.TestLoss)
			num(e, "test_acc", s.TestAcc)
		}
		if s.Weight > 0 {
			num(e, "weight", s.Weight)
		}
		e.Send()
	}
	e := m.log.Log().Int("outer", ev.Step).Str("phase", ev.Phase).Int("round", ev.Round).Str("client", "all")
	if agg.TrainClients > 0 {
		num(e, "train_loss", agg.TrainLoss)
		num(e, "train_acc", agg.TrainAcc)
	}
	if agg.ValRows > 0 {
		num(e, "val_acc", agg.ValAcc)
	}
	if agg.TestRows > 0 {
		num(e, "test_acc", agg.TestAcc)
		num(e, "test_acc_p10", agg.TestAccP)
	}
	if agg.ConsensusMeasured() {
		num(e, "consensus", agg.Consensus)
	}
	if agg.MinWeight > 0 {
		num(e, "min_weight", agg.MinWeight)
	}
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
		m.log.Log().Int("outer", ev.Step).Str("phase", ev.Phase).Int("round", ev.Round).Int("client", i).
			Floats64("hypergradient", s.Hyper).Send() // finite: checkStats ran
		for _, v := range s.Hyper {
			norm += v * v
		}
	}
	norm = math.Sqrt(norm)
	if math.IsInf(norm, 1) { // the squares overflowed, not the entries
		hyper := make([][]float64, len(ev.Clients))
		for i, s := range ev.Clients {
			hyper[i] = s.Hyper
		}
		norm = stackedNorm(hyper)
	}
	e := m.log.Log().Int("outer", ev.Step).Str("phase", ev.Phase).Int("round", ev.Round).Str("client", "all")
	num(e, "hypergradient_norm", norm)
	e.Int64("messages", ev.Traffic.Messages).Int64("bytes", ev.Traffic.Bytes).Send()
}
