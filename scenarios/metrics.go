package scenarios

import (
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
// byte-identical across runs with the same seed.
type metricsWriter struct {
	log   zerolog.Logger
	outer int // current outer step, written on every line
}

func newMetricsWriter(w io.Writer) *metricsWriter {
	return &metricsWriter{log: zerolog.New(w)}
}

func (m *metricsWriter) round(ev optim.RoundEvent, agg Aggregate) {
	for i, s := range ev.Clients {
		m.log.Log().Int("outer", m.outer).Str("phase", ev.Phase).Int("round", ev.Round).Int("client", i).
			Float64("train_loss", s.TrainLoss).Float64("train_acc", s.TrainAcc).
			Float64("val_loss", s.ValLoss).Float64("val_acc", s.ValAcc).
			Float64("test_loss", s.TestLoss).Float64("test_acc", s.TestAcc).Send()
	}
	m.log.Log().Int("outer", m.outer).Str("phase", ev.Phase).Int("round", ev.Round).Str("client", "all").
		Float64("train_loss", agg.TrainLoss).Float64("train_acc", agg.TrainAcc).
		Float64("val_acc", agg.ValAcc).Float64("test_acc", agg.TestAcc).
		Float64("test_acc_p10", agg.TestAccP).Float64("consensus", agg.Consensus).
		Int64("messages", ev.Traffic.Messages).Int64("bytes", ev.Traffic.Bytes).Send()
}

// hyper writes the hyper-gradient phase: one line per client with its
// estimate and an aggregate line with the traffic.
func (m *metricsWriter) hyper(ev optim.RoundEvent) {
	var norm float64
	for i, s := range ev.Clients {
		m.log.Log().Int("outer", m.outer).Str("phase", ev.Phase).Int("round", ev.Round).Int("client", i).
			Floats64("hypergradient", s.Hyper).Send()
		for _, v := range s.Hyper {
			norm += v * v
		}
	}
	m.log.Log().Int("outer", m.outer).Str("phase", ev.Phase).Int("round", ev.Round).Str("client", "all").
		Float64("hypergradient_norm", math.Sqrt(norm)).
		Int64("messages", ev.Traffic.Messages).Int64("bytes", ev.Traffic.Bytes).Send()
}
