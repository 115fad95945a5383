package experiments

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/pdbo"
	"hgpsim/scenarios"
)

func init() {
	scenarios.Experiments.Register("hgp-error",
		"The PDBO paper's App. C.6 / Fig. 2: the error of VR-HGP against the number of rounds m, per (alpha, beta) pair, against the dense fixed-point oracle linearized at the same state, over many seeds and networks (logistic regression with label weights on a one-dimensional two-class data set). Writes error.csv, error.png and summary.json.",
		func() scenarios.Experiment {
			return &HGPError{Networks: []string{"stochastic-undirected", "stochastic-directed"},
				Pairs: [][2]float64{{1, 0}, {0.9, 0.1}}, Seeds: 10, M: 500, Linearize: "last", Sampling: "alternate",
				LR: 0.5, Classes: [2]int{0, 1}, Train: 100, Val: 100, Test: 1}
		})
}

// HGPError is the error-against-depth experiment of the PDBO paper's
// App. C.6 (Fig. 2): n clients, binary logistic regression with label
// weights λ ∈ R² on a one-dimensional two-class data set, full batches,
// T rounds of SGP (Eq. 4b), then M iterations of VR-HGP per (α, β) with the
// true p̄ and δ̄, compared with the dense fixed-point oracle linearized at
// the same state. All pairs of one (network, seed) run in lockstep over the
// same edge realizations (common random numbers), so pairs are compared
// seed by seed. A seed whose oracle does not exist is recorded, not fatal.
type HGPError struct {
	Networks  []string     `yaml:"networks" doc:"network kinds, one panel each; the scenario's network parameters apply to its own kind, the defaults to the others"`
	Pairs     [][2]float64 `yaml:"pairs" doc:"(alpha, beta) pairs in [0, 1]², one curve each; (1, 0) is HGP"`
	Seeds     int          `yaml:"seeds" doc:"seeds seed … seed + seeds − 1, 1 … 10000"`
	M         int          `yaml:"m" doc:"VR-HGP iterations, 1 … 100000"`
	Linearize string       `yaml:"linearize" doc:"last (the last SGP iterate, as Alg. 1) or fixed-point (y* of the expected SGP map)"`
	Sampling  string       `yaml:"sampling" doc:"alternate (Eq. 9, 2M rounds) or simultaneous (M rounds); both unbiased"`
	LR        float64      `yaml:"lr" doc:"constant SGP step, also the step of the linearized map, finite, > 0"`
	Classes   [2]int       `yaml:"classes" doc:"real data: the two classes whose mean pixel is the feature"`
	// OracleGap also builds the oracle at the other linearization point and
	// reports ‖oracle at y⁽ᵀ⁾ − oracle at y*‖ (costs the expected fixed point
	// and a second oracle per seed).
	OracleGap bool `yaml:"oracle_gap" doc:"also report the gap between the oracles at the last iterate and at the fixed point"`
	// Real data: examples per client in each split (synthetic data takes
	// them from the data section).
	Train int `yaml:"train" doc:"real data: training examples per client"`
	Val   int `yaml:"val" doc:"real data: validation examples per client (F_i is the validation loss)"`
	Test  int `yaml:"test" doc:"real data: test examples per client"`
}

// Bounds of the experiment's sizes.
const (
	maxSeeds = 10000
	maxM     = 100000
)

// Validate implements scenarios.Experiment.
func (h *HGPError) Validate(sc *scenarios.Scenario) error {
	if err := h.validate(); err != nil {
		return err
	}
	if _, ok := sc.Data.Source.Params.(*models.SyntheticData); !ok {
		switch sc.Data.Source.Name {
		case "fashion-mnist", "mnist":
		default:
			return fmt.Errorf("data: hgp-error takes synthetic, fashion-mnist or mnist data, got %s", sc.Data.Source.Name)
		}
		for _, v := range []int{h.Train, h.Val, h.Test} {
			if v < 1 || v > models.MaxExamplesPerClient {
				return fmt.Errorf("train, val, test: examples per client must be in [1, %d], got %d, %d, %d", models.MaxExamplesPerClient, h.Train, h.Val, h.Test)
			}
		}
	}
	return nil
}

// Estimate implements scenarios.Experiment: small networks, each run many
// times; the dense oracles are (2n)² with d_x = 2.
func (h *HGPError) Estimate(sc *scenarios.Scenario) scenarios.Resources {
	n := float64(sc.Clients)
	m := 2 * n
	r := scenarios.Resources{Live: []scenarios.ResourcePart{{Name: "network", Bytes: int64(40 * n * n)},
		{Name: "dense oracles", Bytes: int64(2 * 3 * 8 * m * m)}}}
	if _, ok := sc.Data.Source.Params.(*models.SyntheticData); !ok {
		r.Live = append(r.Live, scenarios.ResourcePart{Name: "data", Bytes: 70000 * 785 * 8})
	}
	r.PeakBytes = 2 * r.LiveBytes()
	per := float64(sc.SGP.Rounds)*n*n*8 + float64(len(h.Pairs))*float64(h.M)*2*n*n*8 + 2*m*m*m
	r.Flops = float64(h.Seeds) * float64(len(h.Networks)) * per
	r.Seconds = r.Flops / scenarios.AssumedFlops
	return r
}

func (h *HGPError) validate() error {
	if len(h.Networks) == 0 {
		return fmt.Errorf("networks: list at least one network kind")
	}
	for _, k := range h.Networks {
		if !graph.Topologies.Has(k) {
			return fmt.Errorf("networks: %q is not a network kind (registered: %v)", k, graph.Topologies.Kinds())
		}
	}
	if len(h.Pairs) == 0 {
		return fmt.Errorf("pairs: list at least one (alpha, beta) pair")
	}
	for _, p := range h.Pairs {
		if !(p[0] >= 0 && p[0] <= 1 && p[1] >= 0 && p[1] <= 1) {
			return fmt.Errorf("pairs: alpha and beta must be in [0, 1], got %v", p)
		}
	}
	if h.Seeds < 1 || h.Seeds > maxSeeds {
		return fmt.Errorf("seeds: must be in [1, %d], got %d", maxSeeds, h.Seeds)
	}
	if h.M < 1 || h.M > maxM {
		return fmt.Errorf("m: must be in [1, %d], got %d", maxM, h.M)
	}
	if h.Linearize != "last" && h.Linearize != "fixed-point" {
		return fmt.Errorf("linearize: must be last or fixed-point, got %q", h.Linearize)
	}
	if h.Sampling != "alternate" && h.Sampling != "simultaneous" {
		return fmt.Errorf("sampling: must be alternate or simultaneous, got %q", h.Sampling)
	}
	if h.Classes[0] == h.Classes[1] || h.Classes[0] < 0 || h.Classes[1] < 0 {
		return fmt.Errorf("classes: two different non-negative class labels, got %v", h.Classes)
	}
	if !(h.LR > 0) || math.IsInf(h.LR, 0) {
		return fmt.Errorf("lr: must be a finite number > 0, got %v", h.LR)
	}
	return nil
}

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

// hgpErrorSeed is the outcome of one (network, seed).
type hgpErrorSeed struct {
	seed   uint64
	errors [][]float64   // [pair][m], m = 0..M; nil when skipped
	skip   *HGPErrorSkip // no oracle at the chosen linearization
	norm   float64       // ‖oracle‖
	gap    float64       // valid when gapErr == nil and the gap was asked for
	gapErr *HGPErrorSkip // the other oracle (or this one) does not exist
}

// hgpErrorRun holds seeds[network][seed index].
type hgpErrorRun struct {
	spec  HGPError
	seeds [][]hgpErrorSeed
}

// curves returns errors[m] of pair pi on network ni for the seeds that have
// an oracle, in seed order.
func (r *hgpErrorRun) curves(ni, pi int) [][]float64 {
	var out [][]float64
	for _, s := range r.seeds[ni] {
		if s.skip == nil {
			out = append(out, s.errors[pi])
		}
	}
	return out
}

// Run implements scenarios.Experiment.
func (hp *HGPError) Run(ctx context.Context, sc scenarios.Scenario, env scenarios.Env) (any, error) {
	h := *hp
	res := &hgpErrorRun{spec: h, seeds: make([][]hgpErrorSeed, len(h.Networks))}
	for ni, kind := range h.Networks {
		for s := 0; s < h.Seeds; s++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seed := sc.Seed + uint64(s)
			one, err := hgpErrorOne(ctx, sc, &h, env, kind, seed, nil)
			if err != nil {
				return nil, fmt.Errorf("network %s, seed %d: %w", kind, seed, err)
			}
			res.seeds[ni] = append(res.seeds[ni], one)
			env.Progress("hgp-error/"+kind, s, h.Seeds)
		}
	}
	csv, err := res.csv()
	if err != nil {
		return nil, err
	}
	if err := env.WriteFile("error.csv", csv); err != nil {
		return nil, err
	}
	png, err := res.plot()
	if err != nil {
		return nil, err
	}
	if err := env.WriteFile("error.png", png); err != nil {
		return nil, err
	}
	sum := res.summary(sc)
	if err := writeSummary(env, sum); err != nil {
		return nil, err
	}
	return sum, nil
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
		final := make([][]float64, len(h.Pairs))
		for pi := range h.Pairs {
			for _, c := range r.curves(ni, pi) {
				final[pi] = append(final[pi], c[h.M])
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

// hgpErrorWrap, when not nil, wraps the behaviour of client i for pair pi
// (tests record what each pair sees through it).
type hgpErrorWrap func(pi, i int, b optim.Behaviour) optim.Behaviour

// hgpErrorOne runs one (network, seed): SGP, the linearization point(s),
// the oracle(s), and every (α, β) in lockstep, so that all pairs see the
// same edge realizations (common random numbers: ticks T … T + rounds − 1
// after the T rounds of SGP). A missing oracle at the chosen linearization
// is not an error: the result says why and carries no errors.
func hgpErrorOne(ctx context.Context, sc scenarios.Scenario, h *HGPError, env scenarios.Env, kind string, seed uint64, wrap hgpErrorWrap) (hgpErrorSeed, error) {
	out := hgpErrorSeed{seed: seed}
	n := sc.Clients
	topo := sc.Network.Topology
	if topo.Name != kind {
		topo = registry.Choose[graph.Topology](kind)
	}
	nw, err := graph.Build(topo, n, seed)
	if err != nil {
		return out, err
	}
	data, err := oneDimData(sc, h, seed)
	if err != nil {
		return out, err
	}
	base := models.NewLogistic(1, l2Rate(sc.Model.Arch.Params))
	lambda := []float64{0, 0}
	x0 := make([]float64, base.Dim())
	base.Init(x0, rng.New(seed, rng.Global, rng.PurposeInit))
	cfg := pdbo.SGPConfig{Variant: pdbo.AfterComm, LR: optim.Schedule{Kind: "constant", Base: h.LR}}
	clients := make([]*pdbo.SGP, n)
	beh := make([]optim.Behaviour, n)
	for i := range clients {
		clients[i] = pdbo.NewSGPBilevel(i, n, models.LabelWeights(base, 0), lambda, data[i], x0, cfg, seed)
		beh[i] = clients[i]
	}
	factory, fixed := optim.FixedClients(beh)
	drv, closeDriver, err := env.NewDriver(nw, factory)
	if err != nil {
		return out, err
	}
	defer closeDriver()
	sgp := optim.Phases{{Name: "sgp", Rounds: sc.SGP.Rounds, Tick: 0}}
	if _, err := drv.Execute(ctx, &sgp, optim.NoSink{}); err != nil {
		return out, err
	}
	pTrue := nw.ExpectedPushWeights()
	last := make([]pdbo.Linearization, n)
	for i, c := range clients {
		lin := c.Linearize(data[i].Val, h.LR, 0, seed)
		lin.PBar = pTrue[i]
		for j := range lin.DeltaBar {
			lin.DeltaBar[j] = nw.Delta(j, i)
		}
		last[i] = lin
	}
	// Each linearization point and its oracle, computed only when needed:
	// the chosen one always, the other one for the gap.
	type point struct {
		name   string
		lins   []pdbo.Linearization
		oracle [][]float64
		miss   *HGPErrorSkip
	}
	build := func(name string) (*point, error) {
		pt := &point{name: name, lins: last}
		if name == "fixed-point" {
			fixed := append([]pdbo.Linearization(nil), last...)
			z, omega, err := pdbo.ExpectedFixedPoint(fixed, pTrue, x0, 1000000, 1e-13)
			if err != nil {
				pt.miss = &HGPErrorSkip{Network: kind, Seed: seed, At: name, Status: "no-fixed-point", Reason: err.Error()}
				return pt, nil
			}
			for i := range fixed {
				fixed[i].Z, fixed[i].Omega = z[i], omega[i]
			}
			pt.lins = fixed
		}
		o, err := pdbo.FixedPointOracle(pt.lins)
		var oe *pdbo.OracleError
		switch {
		case errors.As(err, &oe):
			pt.miss = &HGPErrorSkip{Network: kind, Seed: seed, At: name, Status: oe.Status(),
				MinOmega: &oe.MinOmega, Reason: oe.Error()}
			if !math.IsNaN(oe.Radius) {
				pt.miss.Radius = &oe.Radius
			}
		case err != nil:
			return nil, err
		}
		pt.oracle = o
		return pt, nil
	}
	chosen, err := build(h.Linearize)
	if err != nil {
		return out, err
	}
	if h.OracleGap {
		otherName := "fixed-point"
		if h.Linearize == "fixed-point" {
			otherName = "last"
		}
		other, err := build(otherName)
		if err != nil {
			return out, err
		}
		switch {
		case chosen.miss != nil:
			out.gapErr = chosen.miss
		case other.miss != nil:
			out.gapErr = other.miss
		default:
			out.gap = stackedGap(chosen.oracle, other.oracle)
		}
	}
	if chosen.miss != nil {
		out.skip = chosen.miss
		return out, nil
	}
	oracle := chosen.oracle
	for i := range oracle {
		for _, v := range oracle[i] {
			out.norm += v * v
		}
	}
	out.norm = math.Sqrt(out.norm)

	sampling := pdbo.Alternate
	if h.Sampling == "simultaneous" {
		sampling = pdbo.Simultaneous
	}
	per := sampling.Rounds(1)
	out.errors = make([][]float64, len(h.Pairs))
	got := make([][]float64, n)
	for pi, p := range h.Pairs {
		errs := make([]float64, h.M+1)
		for i, l := range chosen.lins {
			e := pdbo.NewVRHGP(l, p[0], p[1], sampling)
			got[i] = e.Estimate()
			fixed[i].Behaviour = e
			if wrap != nil {
				fixed[i].Behaviour = wrap(pi, i, e)
			}
		}
		errs[0] = stackedGap(got, oracle)
		sink := optim.SinkFunc(func(ev *optim.RoundEvent) error {
			for i, st := range ev.Clients {
				got[i] = st.Hyper
			}
			errs[(ev.Round+1)/per] = stackedGap(got, oracle)
			return nil
		})
		// Every pair starts at the tick right after SGP: all pairs of a
		// seed see the same edge realizations (common random numbers).
		phase := optim.Phases{{Name: "hgp", Rounds: per * h.M, EvalEvery: per, Tick: int64(sc.SGP.Rounds)}}
		if _, err := drv.Execute(ctx, &phase, sink); err != nil {
			return out, fmt.Errorf("pair (%g, %g): %w", p[0], p[1], err)
		}
		out.errors[pi] = errs
	}
	return out, nil
}

// stackedGap is ‖a − b‖ over the stacked per-client vectors.
func stackedGap(a, b [][]float64) float64 {
	s := 0.0
	for i := range a {
		for k, v := range a[i] {
			s += (v - b[i][k]) * (v - b[i][k])
		}
	}
	return math.Sqrt(s)
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

// oneDimData returns each client's one-dimensional two-class data: two
// classes of the synthetic generator, or — with data.kind fashion-mnist,
// as in the paper with MNIST — the mean pixel of two classes (h.Classes)
// of the real images, relabelled 0/1 and split among clients at random.
func oneDimData(sc scenarios.Scenario, h *HGPError, seed uint64) ([]models.ClientData, error) {
	n := sc.Clients
	if sd, ok := sc.Data.Source.Params.(*models.SyntheticData); ok {
		return models.Synthetic(models.SyntheticSpec{Clients: n, Classes: 2, Features: 1,
			Train: sd.Train, Val: sd.Val, Test: sd.Test, Alpha: sd.Alpha,
			Separation: sd.Separation, Shift: sd.Shift, Noise: sd.Noise}, seed)
	}
	dir := sc.Data.Source.Params.(*models.IDXData).Dir
	src := models.FashionMNIST(dir)
	if sc.Data.Source.Name == "mnist" {
		src = models.MNIST(dir)
	}
	train, _, err := src.Load()
	if err != nil {
		return nil, err
	}
	pair := h.Classes
	var rows []int
	for i, y := range train.Y {
		if y == pair[0] || y == pair[1] {
			rows = append(rows, i)
		}
	}
	r := rng.New(seed, rng.Global, rng.PurposePartition)
	r.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
	per := h.Train + h.Val + h.Test
	if len(rows) < n*per {
		return nil, fmt.Errorf("classes %v have %d images, %d clients need %d", pair, len(rows), n, n*per)
	}
	take := func(rs []int) *models.Dataset {
		d := &models.Dataset{X: make([]float64, len(rs)), Y: make([]int, len(rs)), N: len(rs), D: 1, C: 2}
		for k, row := range rs {
			s := 0.0
			for _, v := range train.Row(row) {
				s += v
			}
			d.X[k] = s / float64(train.D)
			if train.Y[row] == pair[1] {
				d.Y[k] = 1
			}
		}
		return d
	}
	out := make([]models.ClientData, n)
	for i := range out {
		rs := rows[i*per : (i+1)*per]
		out[i] = models.ClientData{Train: take(rs[:h.Train]),
			Val:  take(rs[h.Train : h.Train+h.Val]),
			Test: take(rs[h.Train+h.Val:])}
	}
	return out, nil
}

// l2Rate returns the L2 rate of a model kind's parameters.
func l2Rate(a models.Architecture) float64 {
	switch m := a.(type) {
	case *models.SoftmaxSpec:
		return m.L2
	case *models.LogisticSpec:
		return m.L2
	case *models.MLPSpec:
		return m.L2
	}
	return 0
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
