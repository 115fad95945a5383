package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"hgpsim/internal/rng"
	"hgpsim/internal/vec"
)

// SyntheticSpec describes heterogeneous synthetic classification data: a
// Gaussian mixture whose class means are shared by all clients, with label
// skew (each client has its own label distribution) and covariate shift (each
// client has its own offset of the features).
type SyntheticSpec struct {
	Clients, Classes, Features int

	// Examples per client in each split. Sizes are equal across clients so
	// that the pooled mean loss is the average of the clients' mean losses.
	Train, Val, Test int

	// Alpha is the concentration of the Dirichlet(α) label distribution of
	// each client; α > 0. Small α (0.1) gives clients that see few classes,
	// large α (100) gives nearly uniform labels everywhere.
	Alpha float64

	// Separation is the scale of the class means μ_c ~ N(0, Separation² I).
	Separation float64

	// Shift is the scale of the per-client feature shift s_i ~ N(0, Shift² I).
	Shift float64

	// Noise is the within-class standard deviation.
	Noise float64
}

// ClientData is one client's share of the data.
type ClientData struct {
	Train, Val, Test *Dataset
	// Noisy marks the training rows whose label a data source corrupted
	// (the ground truth of mislabel detection); nil when none was.
	Noisy []bool
}

// maxSyntheticValues bounds clients·(Train+Val+Test)·Features, the number of
// float64 values Synthetic (or SyntheticBlock, for its block's clients) allocates (2 GiB), so that a typo in a scenario
// file gives an error instead of an out-of-memory crash.
const maxSyntheticValues = 1 << 28

// validate reports every field of s that is out of range, joined, and
// whether generating the data of this many clients would exceed
// maxSyntheticValues.
func (s SyntheticSpec) validate(clients int) error {
	var errs []error
	atLeast := func(name string, v, lo int) {
		if v < lo {
			errs = append(errs, fmt.Errorf("%s = %d, must be >= %d", name, v, lo))
		}
	}
	atLeast("Clients", s.Clients, 1)
	atLeast("Classes", s.Classes, 2)
	atLeast("Features", s.Features, 1)
	atLeast("Train", s.Train, 1)
	atLeast("Val", s.Val, 1)
	atLeast("Test", s.Test, 1)
	finite := func(name string, v float64, positive bool) {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			errs = append(errs, fmt.Errorf("%s = %v, must be finite", name, v))
		case positive && v <= 0:
			errs = append(errs, fmt.Errorf("%s = %v, must be > 0", name, v))
		case !positive && v < 0:
			errs = append(errs, fmt.Errorf("%s = %v, must be >= 0", name, v))
		}
	}
	finite("Alpha", s.Alpha, true)
	finite("Separation", s.Separation, true)
	finite("Shift", s.Shift, false)
	finite("Noise", s.Noise, false)
	if len(errs) == 0 {
		// Multiply in float64 so that the check itself cannot overflow.
		total := float64(clients) * (float64(s.Train) + float64(s.Val) + float64(s.Test)) * float64(s.Features)
		if total > maxSyntheticValues {
			errs = append(errs, fmt.Errorf("clients·(Train+Val+Test)·Features = %.0f values, must be <= %d", total, maxSyntheticValues))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("datasets: invalid SyntheticSpec: %w", err)
	}
	return nil
}

// Synthetic generates one ClientData per client. An example of client i is
//
//	y ~ Categorical(π_i),  x = μ_y + s_i + Noise·N(0, I)
//
// with π_i ~ Dirichlet(Alpha), s_i ~ N(0, Shift² I) and class means
// μ_c ~ N(0, Separation² I).
//
// Randomness: the class means come from rng.New(seed, rng.Global,
// rng.PurposeData); everything about client i (π_i, then s_i, then the
// Train, Val and Test examples in that order) from rng.New(seed, i,
// rng.PurposeData). Client i's data therefore does not depend on how many
// clients there are, and the same (spec, seed) always gives identical bytes.
//
// It returns an error naming every field of spec that is out of range.
func Synthetic(spec SyntheticSpec, seed uint64) ([]ClientData, error) {
	return SyntheticBlock(spec, seed, 0, spec.Clients)
}

// SyntheticBlock generates the data of clients lo … hi−1 of Synthetic
// (element k is client lo+k, with the same bits): the class means are
// drawn whole, and clients outside the block are not generated at all.
// The bound on the values generated applies to the block.
func SyntheticBlock(spec SyntheticSpec, seed uint64, lo, hi int) ([]ClientData, error) {
	if err := spec.validate(hi - lo); err != nil {
		return nil, err
	}
	checkBlock(spec.Clients, lo, hi)
	C, D := spec.Classes, spec.Features
	g := rng.New(seed, rng.Global, rng.PurposeData)
	mu := make([]float64, C*D)
	for j := range mu {
		mu[j] = spec.Separation * g.NormFloat64()
	}

	out := make([]ClientData, hi-lo)
	pi := make([]float64, C)
	shift := make([]float64, D)
	for k := range out {
		i := lo + k
		r := rng.New(seed, i, rng.PurposeData)
		dirichlet(pi, spec.Alpha, r)
		for j := range shift {
			shift[j] = spec.Shift * r.NormFloat64()
		}
		gen := func(n int) *Dataset {
			ds := &Dataset{X: make([]float64, n*D), Y: make([]int, n), N: n, D: D, C: C}
			for b := range n {
				y := categorical(pi, r)
				ds.Y[b] = y
				row := ds.X[b*D : (b+1)*D]
				for j := range row {
					row[j] = mu[y*D+j] + shift[j] + spec.Noise*r.NormFloat64()
				}
			}
			return ds
		}
		out[k].Train = gen(spec.Train)
		out[k].Val = gen(spec.Val)
		out[k].Test = gen(spec.Test)
	}
	return out, nil
}

// dirichlet writes a Dirichlet(α, …, α) draw into dst, as normalized
// Gamma(α, 1) draws. For small α most Gamma draws are so tiny that they
// underflow to 0 (with α = 0.01 the typical draw is around 10^-30 and many are
// far below 10^-308), and then all of them may, leaving 0/0. The draws are
// therefore made and normalized in log space, where nothing underflows.
func dirichlet(dst []float64, alpha float64, r *rand.Rand) {
	for j := range dst {
		dst[j] = logGamma(alpha, r)
	}
	lse := vec.LogSumExp(dst)
	for j := range dst {
		dst[j] = math.Exp(dst[j] - lse)
	}
}

// logGamma returns log G for G ~ Gamma(shape, 1).
//
// For shape >= 1 it uses the squeeze-free form of Marsaglia and Tsang's
// method ("A simple method for generating gamma variables", ACM TOMS 2000).
// For shape < 1 it uses the boost G(a) = G(a+1)·U^(1/a), whose logarithm
// log G(a+1) + log(U)/a stays finite however small a is.
func logGamma(shape float64, r *rand.Rand) float64 {
	if shape < 1 {
		u := 1 - r.Float64() // in (0, 1], so log u is finite
		return logGamma(shape+1, r) + math.Log(u)/shape
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		z := r.NormFloat64()
		v := 1 + c*z
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64()
		if math.Log(u) < 0.5*z*z+d-d*v+d*math.Log(v) {
			return math.Log(d) + math.Log(v)
		}
	}
}

// categorical draws an index with probabilities p (summing to 1 up to
// rounding) by inverting the cumulative sum.
func categorical(p []float64, r *rand.Rand) int {
	u := r.Float64()
	last := 0
	var cum float64
	for j, pj := range p {
		if pj <= 0 {
			continue
		}
		cum += pj
		last = j
		if u < cum {
			return j
		}
	}
	// Rounding left the total a hair below u: the last class with positive
	// probability is the one whose interval was cut short.
	return last
}
