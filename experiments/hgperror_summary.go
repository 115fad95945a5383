package experiments

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"

	"hgpsim/optim"
	"hgpsim/scenarios"
)

// HGPErrorSummary is summary.json of the experiment. Every statistic is
// over the seeds that have an oracle at the chosen linearization; the others
// are listed in Skipped, and each statistic carries its own seed count n.
type HGPErrorSummary struct {
	Name      string `json:"name"`
	Linearize string `json:"linearize"`
	Driver    string `json:"driver"`
	Seeds     int    `json:"seeds"` // seeds run per network, skipped ones included
	// Final is the error at m = M per (network, α, β); a cell none of whose
	// seeds has an oracle is left out.
	Final []HGPErrorFinal `json:"final"`
	// Beats compares every pair with HGP, (1, 0), seed by seed on the final
	// error; empty when (1, 0) is not among the pairs.
	Beats []HGPErrorBeats `json:"beats_hgp,omitempty"`
	// Skipped lists the seeds without an oracle at the chosen linearization,
	// with the reason; they are in no statistic.
	Skipped   []HGPErrorSkip    `json:"skipped"`
	OracleAbs map[string]Quants `json:"oracle_norm"` // ‖oracle‖ per network
	// OracleGap is ‖oracle at y⁽ᵀ⁾ − oracle at y*‖ per network (oracle_gap:
	// true only), over the seeds where both oracles exist; GapMissing lists
	// the other seeds with the reason.
	OracleGap  map[string]Quants `json:"oracle_gap,omitempty"`
	GapMissing []HGPErrorSkip    `json:"oracle_gap_missing,omitempty"`
	// FinalOther is the error at m = M against the oracle at the other
	// linearization point (oracle_gap: true only), over the seeds where
	// both oracles exist: with linearize: last, the distance of the
	// estimate from the hyper-gradient at y*, which a guarded and a plain
	// run share when the guard is idle at y*.
	FinalOther []HGPErrorFinal `json:"final_vs_other_oracle,omitempty"`
}

// HGPErrorFinal is the distribution over seeds of the error at m = M.
type HGPErrorFinal struct {
	Network string  `json:"network"`
	Alpha   float64 `json:"alpha"`
	Beta    float64 `json:"beta"`
	Quants
}

// HGPErrorBeats is the paired comparison of one (α, β) with HGP: over the
// same seeds (hence the same edge realizations), in how many the pair's
// error at m = M is strictly lower than HGP's.
type HGPErrorBeats struct {
	Network string  `json:"network"`
	Alpha   float64 `json:"alpha"`
	Beta    float64 `json:"beta"`
	Wins    int     `json:"wins"`
	Ties    int     `json:"ties"`
	Seeds   int     `json:"seeds"`
}

// HGPErrorSkip says why a (network, seed) has no oracle at linearization
// point At (last or fixed-point).
type HGPErrorSkip struct {
	Network string `json:"network"`
	Seed    uint64 `json:"seed"`
	At      string `json:"at"`
	// Status is diverges (ρ(Ā) ≥ 1), singular (I − Ā singular) or
	// no-fixed-point (the expected SGP map did not settle, so y* is unknown).
	Status   string   `json:"status"`
	Radius   *float64 `json:"spectral_radius,omitempty"` // ρ(Ā)
	MinOmega *float64 `json:"min_omega,omitempty"`       // min_i ω_i at the linearization
	Reason   string   `json:"reason"`
}

// Quants are the median and the 10% / 90% quantiles over N seeds.
type Quants struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
}

func quants(v []float64) Quants {
	return Quants{N: len(v), Median: optim.Percentile(v, 0.5), P10: optim.Percentile(v, 0.1), P90: optim.Percentile(v, 0.9)}
}

func (r *hgpErrorRun) summary(sc scenarios.Scenario) *HGPErrorSummary {
	h := r.spec
	sum := &HGPErrorSummary{Name: sc.Name, Linearize: h.Linearize, Driver: sc.Runtime.DriverName(), Seeds: h.Seeds,
		Skipped: []HGPErrorSkip{}, OracleAbs: map[string]Quants{}}
	if h.OracleGap {
		sum.OracleGap = map[string]Quants{}
	}
	hgp := -1
	for pi, p := range h.Pairs {
		if p == [2]float64{1, 0} {
			hgp = pi
			break
		}
	}
	for ni, kind := range h.Networks {
		var norms, gaps []float64
		for _, s := range r.seeds[ni] {
			if s.skip != nil {
				sum.Skipped = append(sum.Skipped, *s.skip)
			} else {
				norms = append(norms, s.norm)
			}
			if !h.OracleGap {
				continue
			}
			if s.gapErr != nil {
				sum.GapMissing = append(sum.GapMissing, *s.gapErr)
			} else {
				gaps = append(gaps, s.gap)
			}
		}
		final, other := make([][]float64, len(h.Pairs)), make([][]float64, len(h.Pairs))
		for pi := range h.Pairs {
			for _, c := range r.curves(ni, pi) {
				final[pi] = append(final[pi], c[h.M])
			}
			for _, s := range r.seeds[ni] {
				if s.other != nil {
					other[pi] = append(other[pi], s.other[pi])
				}
			}
			if len(other[pi]) > 0 {
				sum.FinalOther = append(sum.FinalOther, HGPErrorFinal{Network: kind, Alpha: h.Pairs[pi][0], Beta: h.Pairs[pi][1], Quants: quants(other[pi])})
			}
		}
		for pi, p := range h.Pairs {
			if len(final[pi]) > 0 {
				sum.Final = append(sum.Final, HGPErrorFinal{Network: kind, Alpha: p[0], Beta: p[1], Quants: quants(final[pi])})
			}
		}
		if hgp >= 0 {
			for pi, p := range h.Pairs {
				if pi == hgp {
					continue
				}
				b := HGPErrorBeats{Network: kind, Alpha: p[0], Beta: p[1], Seeds: len(final[pi])}
				for s, e := range final[pi] {
					switch {
					case e < final[hgp][s]:
						b.Wins++
					case e == final[hgp][s]:
						b.Ties++
					}
				}
				sum.Beats = append(sum.Beats, b)
			}
		}
		if len(norms) > 0 {
			sum.OracleAbs[kind] = quants(norms)
		}
		if len(gaps) > 0 {
			sum.OracleGap[kind] = quants(gaps)
		}
	}
	return sum
}

// writeCSV writes error.csv atomically: one row per (network, pair, seed,
// m) with status ok, and one row per (network, pair, seed) without m and
// error for a seed that has no oracle, its status and reason filled in.
func (r *hgpErrorRun) csv() ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"network", "alpha", "beta", "seed", "m", "error", "status", "reason"})
	for ni, kind := range r.spec.Networks {
		for pi, p := range r.spec.Pairs {
			a, b := ftoa(p[0]), ftoa(p[1])
			for _, s := range r.seeds[ni] {
				seed := strconv.FormatUint(s.seed, 10)
				if s.skip != nil {
					_ = w.Write([]string{kind, a, b, seed, "", "", s.skip.Status, s.skip.Reason})
					continue
				}
				for m, e := range s.errors[pi] {
					_ = w.Write([]string{kind, a, b, seed, strconv.Itoa(m), ftoa(e), "ok", ""})
				}
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("writing error.csv: %w", err)
	}
	return buf.Bytes(), nil
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// bands returns per m the median and 10/90% quantiles over seeds.
func bands(errs [][]float64) (med, lo, hi []float64) {
	m := len(errs[0])
	med, lo, hi = make([]float64, m), make([]float64, m), make([]float64, m)
	col := make([]float64, len(errs))
	for k := 0; k < m; k++ {
		for s := range errs {
			col[s] = errs[s][k]
		}
		sort.Float64s(col)
		med[k] = optim.Percentile(col, 0.5)
		lo[k] = optim.Percentile(col, 0.1)
		hi[k] = optim.Percentile(col, 0.9)
	}
	return med, lo, hi
}

// Headlines are the console lines of a finished experiment: the error at
// m = M per network and pair.
func (s *HGPErrorSummary) Headlines() []string {
	out := make([]string, 0, len(s.Final))
	for _, f := range s.Final {
		out = append(out, fmt.Sprintf("%s (α, β) = (%g, %g): error at m = M median %.4g (10%%–90%%: %.4g–%.4g) over %d seeds",
			f.Network, f.Alpha, f.Beta, f.Median, f.P10, f.P90, f.N))
	}
	return out
}
