package optim

import (
	"math"
	"sort"
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
	// MinWeight is the smallest push-sum weight min_i ω_i (0 without
	// push-sum clients): the step a gradient takes on x_i is the step
	// size over ω_i.
	MinWeight float64 `json:"min_weight,omitempty"`
	// How many clients evaluated each split (train, reported an x), and the
	// validation and test rows weighed: a mean over none was not measured,
	// and metrics.jsonl leaves it out rather than writing 0.
	TrainClients int `json:"-"`
	XClients     int `json:"-"`
	ValRows      int `json:"-"`
	TestRows     int `json:"-"`
}

// ConsensusMeasured reports whether the consensus distance measures
// anything: it needs the parameters of two clients at least (over one
// vector, a server's global model, it is 0 by definition).
func (a Aggregate) ConsensusMeasured() bool { return a.XClients > 1 }

// Summarize aggregates stats in client order (fixed, so deterministic).
// Means over clients take the clients that evaluated the split (TrainN,
// ValN, TestN > 0): a server evaluating a global model reports alone.
func Summarize(stats []Stats) Aggregate { return summarize(stats, nil) }

// ConsensusDistance is sqrt(1/n Σ‖x_i − x̄‖²) over the Clients (n) that
// report an x: what Summarize computes from the stats' X.
type ConsensusDistance struct {
	Value   float64
	Clients int
}

// ConsensusOf returns the consensus distance of stats, with the bits
// Summarize gives it.
func ConsensusOf(stats []Stats) ConsensusDistance {
	c := ConsensusDistance{Value: consensus(stats)}
	for _, s := range stats {
		if s.HasX() {
			c.Clients++
		}
	}
	return c
}

// summarize is Summarize with the consensus distance given (c non-nil)
// rather than computed from the stats' X.
func summarize(stats []Stats, c *ConsensusDistance) Aggregate {
	n := 0
	var a Aggregate
	var vw, tw float64
	accs := make([]float64, 0, len(stats))
	for _, s := range stats {
		if s.TrainN > 0 {
			n++
		}
		if s.HasX() {
			a.XClients++
		}
		a.TrainLoss += s.TrainLoss
		a.TrainAcc += s.TrainAcc
		a.OuterLoss += s.OuterLoss
		a.ValAcc += s.ValAcc * float64(s.ValN)
		vw += float64(s.ValN)
		a.TestAcc += s.TestAcc * float64(s.TestN)
		tw += float64(s.TestN)
		if s.TestN > 0 {
			accs = append(accs, s.TestAcc)
		}
		if s.Weight > 0 && (a.MinWeight == 0 || s.Weight < a.MinWeight) {
			a.MinWeight = s.Weight
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
	a.TrainClients, a.ValRows, a.TestRows = n, int(vw), int(tw)
	a.TestAccP = Percentile(accs, 0.1)
	if c != nil {
		a.Consensus, a.XClients = c.Value, c.Clients
	} else {
		a.Consensus = consensus(stats)
	}
	return a
}

// Percentile returns the q-quantile by linear interpolation between order
// statistics (the usual "type 7" definition); NaN for no data.
func Percentile(v []float64, q float64) float64 {
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

// consensus is sqrt(1/n Σ‖x_i − x̄‖²) over the clients that report an x.
func consensus(stats []Stats) float64 {
	n, d := 0, 0
	for _, s := range stats {
		if s.HasX() {
			n, d = n+1, len(s.X)+len(s.X32)
		}
	}
	if n == 0 {
		return 0
	}
	// A float32 x is read widened (exactly): the same sums as a float64
	// copy of it would give.
	mean := make([]float64, d)
	for _, s := range stats {
		for k, v := range s.X {
			mean[k] += v
		}
		for k, v := range s.X32 {
			mean[k] += float64(v)
		}
	}
	for k := range mean {
		mean[k] /= float64(n)
	}
	var ss float64
	for _, s := range stats {
		for k, v := range s.X {
			ss += (v - mean[k]) * (v - mean[k])
		}
		for k, v := range s.X32 {
			ss += (float64(v) - mean[k]) * (float64(v) - mean[k])
		}
	}
	return math.Sqrt(ss / float64(n))
}
