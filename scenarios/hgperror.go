package scenarios

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// HGPErrorSpec is the error-against-depth experiment of the PDBO paper's
// App. C.6 (Fig. 2): n clients, binary logistic regression with label
// weights λ ∈ R² on a one-dimensional two-class data set, full batches,
// T rounds of SGP (Eq. 4b), then M iterations of VR-HGP per (α, β) with the
// true p̄ and δ̄, compared with the dense fixed-point oracle linearized at
// the same state.
type HGPErrorSpec struct {
	Networks  []string     `yaml:"networks"`  // network kinds, each with the scenario's network settings
	Pairs     [][2]float64 `yaml:"pairs"`     // (α, β) pairs; (1, 0) is HGP
	Seeds     int          `yaml:"seeds"`     // seeds scenario.seed … scenario.seed+seeds−1
	M         int          `yaml:"m"`         // VR-HGP iterations
	Linearize string       `yaml:"linearize"` // last (y⁽ᵀ⁾, as Alg. 1) | fixed-point (y* of the expected SGP map)
	Sampling  string       `yaml:"sampling"`  // alternate (unbiased, Eq. 9) | simultaneous
	LR        float64      `yaml:"lr"`        // constant SGP step size, also the step of the linearized map
	Classes   [2]int       `yaml:"classes"`   // real data: the two classes whose mean pixel is the feature
	// Real data: examples per client in each split (synthetic data takes
	// them from the data section).
	Train int `yaml:"train"`
	Val   int `yaml:"val"`
	Test  int `yaml:"test"`
}

func (h *HGPErrorSpec) validate() error {
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
	if h.Seeds < 1 {
		return fmt.Errorf("seeds: must be >= 1, got %d", h.Seeds)
	}
	if h.M < 1 {
		return fmt.Errorf("m: must be >= 1, got %d", h.M)
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

// HGPErrorSummary is summary.json of the experiment.
type HGPErrorSummary struct {
	Name      string            `json:"name"`
	Linearize string            `json:"linearize"`
	Final     []HGPErrorFinal   `json:"final"`      // error at m = M
	OracleGap map[string]Quants `json:"oracle_gap"` // ‖oracle at y⁽ᵀ⁾ − oracle at y*‖ per network
	OracleAbs map[string]Quants `json:"oracle_norm"`
}

// HGPErrorFinal is the distribution over seeds of the error at m = M.
type HGPErrorFinal struct {
	Network string  `json:"network"`
	Alpha   float64 `json:"alpha"`
	Beta    float64 `json:"beta"`
	Quants
}

// Quants are the median and the 10% / 90% quantiles over seeds.
type Quants struct {
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
}

func quants(v []float64) Quants {
	return Quants{Median: optim.Percentile(v, 0.5), P10: optim.Percentile(v, 0.1), P90: optim.Percentile(v, 0.9)}
}

// hgpErrorRun holds errors[network][pair][seed][m].
type hgpErrorRun struct {
	spec   HGPErrorSpec
	errors [][][][]float64
	gap    [][]float64 // [network][seed]
	norm   [][]float64
}

func executeHGPError(ctx context.Context, sc Scenario, opt Options) (*HGPErrorSummary, error) {
	h := *sc.HGPError
	res := &hgpErrorRun{spec: h}
	res.errors = make([][][][]float64, len(h.Networks))
	res.gap = make([][]float64, len(h.Networks))
	res.norm = make([][]float64, len(h.Networks))
	for ni, kind := range h.Networks {
		res.errors[ni] = make([][][]float64, len(h.Pairs))
		for pi := range h.Pairs {
			res.errors[ni][pi] = make([][]float64, h.Seeds)
		}
		for s := 0; s < h.Seeds; s++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			seed := sc.Seed + uint64(s)
			errs, gap, norm, err := hgpErrorOne(sc, kind, seed)
			if err != nil {
				return nil, fmt.Errorf("network %s, seed %d: %w", kind, seed, err)
			}
			for pi := range h.Pairs {
				res.errors[ni][pi][s] = errs[pi]
			}
			res.gap[ni] = append(res.gap[ni], gap)
			res.norm[ni] = append(res.norm[ni], norm)
			if opt.Progress != nil {
				opt.Progress(optim.RoundEvent{Phase: "hgp-error/" + kind, Round: s}, Aggregate{}, h.Seeds)
			}
		}
	}
	if err := res.writeCSV(filepath.Join(opt.OutDir, "error.csv")); err != nil {
		return nil, err
	}
	if err := res.plot(filepath.Join(opt.OutDir, "error.png")); err != nil {
		return nil, err
	}
	sum := &HGPErrorSummary{Name: sc.Name, Linearize: h.Linearize, OracleGap: map[string]Quants{}, OracleAbs: map[string]Quants{}}
	for ni, kind := range h.Networks {
		for pi, p := range h.Pairs {
			final := make([]float64, h.Seeds)
			for s := range final {
				final[s] = res.errors[ni][pi][s][h.M]
			}
			sum.Final = append(sum.Final, HGPErrorFinal{Network: kind, Alpha: p[0], Beta: p[1], Quants: quants(final)})
		}
		sum.OracleGap[kind] = quants(res.gap[ni])
		sum.OracleAbs[kind] = quants(res.norm[ni])
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(filepath.Join(opt.OutDir, "summary.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	return sum, nil
}

// hgpErrorOne runs one (network, seed): SGP, the two linearization points,
// the oracle, and every (α, β). It returns errors[pair][m] for m = 0..M,
// the gap between the oracles at y⁽ᵀ⁾ and y*, and the oracle's norm.
func hgpErrorOne(sc Scenario, kind string, seed uint64) ([][]float64, float64, float64, error) {
	h := sc.HGPError
	n := sc.Clients
	topo := sc.Network.Topology
	if topo.Name != kind {
		topo = registry.Choose[graph.Topology](kind)
	}
	nw, err := graph.Build(topo, n, seed)
	if err != nil {
		return nil, 0, 0, err
	}
	data, err := oneDimData(sc, seed)
	if err != nil {
		return nil, 0, 0, err
	}
	base := models.NewLogistic(1, l2Rate(sc.Model.Arch.Params))
	lambda := []float64{0, 0}
	x0 := make([]float64, base.Dim())
	base.Init(x0, rng.New(seed, rng.Global, rng.PurposeInit))
	cfg := optim.SGPConfig{Variant: optim.AfterComm, LR: optim.Schedule{Kind: "constant", Base: h.LR}}
	clients := make([]*optim.SGP, n)
	beh := make([]optim.Behaviour, n)
	for i := range clients {
		clients[i] = optim.NewSGPBilevel(i, n, models.LabelWeights(base, 0), lambda, data[i], x0, cfg, seed)
		beh[i] = clients[i]
	}
	factory, fixedClients := optim.FixedClients(beh)
	drv, err := optim.NewSequential(nw, factory)
	if err != nil {
		return nil, 0, 0, err
	}
	sgp := optim.Phases{{Name: "sgp", Rounds: sc.SGP.Rounds, Tick: optim.Continue}}
	if _, err := drv.Execute(context.Background(), &sgp, optim.NoSink{}); err != nil {
		return nil, 0, 0, err
	}
	pTrue := nw.ExpectedPushWeights()
	last := make([]optim.Linearization, n)
	for i, c := range clients {
		lin := c.Linearize(data[i].Val, h.LR, 0, seed)
		lin.PBar = pTrue[i]
		for j := range lin.DeltaBar {
			lin.DeltaBar[j] = nw.Prob[j][i]
		}
		last[i] = lin
	}
	fixed := append([]optim.Linearization(nil), last...)
	z, omega, err := optim.ExpectedFixedPoint(fixed, pTrue, x0, 1000000, 1e-13)
	if err != nil {
		return nil, 0, 0, err
	}
	for i := range fixed {
		fixed[i].Z, fixed[i].Omega = z[i], omega[i]
	}
	oLast, err := optim.FixedPointOracle(last)
	if err != nil {
		return nil, 0, 0, err
	}
	oFixed, err := optim.FixedPointOracle(fixed)
	if err != nil {
		return nil, 0, 0, err
	}
	lins, oracle := last, oLast
	if h.Linearize == "fixed-point" {
		lins, oracle = fixed, oFixed
	}
	sampling := optim.Alternate
	if h.Sampling == "simultaneous" {
		sampling = optim.Simultaneous
	}
	per := sampling.Rounds(1)
	out := make([][]float64, len(h.Pairs))
	for pi, p := range h.Pairs {
		est := make([]*optim.VRHGP, n)
		for i, l := range lins {
			est[i] = optim.NewVRHGP(l, p[0], p[1], sampling)
			fixedClients[i].Behaviour = est[i]
		}
		errs := make([]float64, h.M+1)
		errs[0] = stackedDistance(est, oracle)
		phases := make(optim.Phases, h.M)
		for m := range phases {
			phases[m] = optim.PhaseSpec{Name: "hgp", Rounds: per, Tick: optim.Continue, Step: m + 1}
		}
		sink := errorSink{finished: func(rep *optim.PhaseReport) { errs[rep.Spec.Step] = stackedDistance(est, oracle) }}
		if _, err := drv.Execute(context.Background(), &phases, sink); err != nil {
			return nil, 0, 0, err
		}
		out[pi] = errs
	}
	var gap, norm float64
	for i := range oLast {
		for k := range oLast[i] {
			gap += (oLast[i][k] - oFixed[i][k]) * (oLast[i][k] - oFixed[i][k])
			norm += oracle[i][k] * oracle[i][k]
		}
	}
	return out, math.Sqrt(gap), math.Sqrt(norm), nil
}

func stackedDistance(est []*optim.VRHGP, oracle [][]float64) float64 {
	s := 0.0
	for i, e := range est {
		for k, v := range e.Estimate() {
			s += (v - oracle[i][k]) * (v - oracle[i][k])
		}
	}
	return math.Sqrt(s)
}

func (r *hgpErrorRun) writeCSV(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "network,alpha,beta,seed,m,error")
	for ni, kind := range r.spec.Networks {
		for pi, p := range r.spec.Pairs {
			for s, errs := range r.errors[ni][pi] {
				for m, e := range errs {
					fmt.Fprintf(w, "%s,%s,%s,%d,%d,%s\n", kind, ftoa(p[0]), ftoa(p[1]), s, m, ftoa(e))
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
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
func oneDimData(sc Scenario, seed uint64) ([]models.ClientData, error) {
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
	pair := sc.HGPError.Classes
	var rows []int
	for i, y := range train.Y {
		if y == pair[0] || y == pair[1] {
			rows = append(rows, i)
		}
	}
	r := rng.New(seed, rng.Global, rng.PurposePartition)
	r.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
	h := sc.HGPError
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

// errorSink calls finished at the end of every phase.
type errorSink struct {
	optim.NoSink
	finished func(*optim.PhaseReport)
}

func (s errorSink) Finished(rep *optim.PhaseReport) error {
	s.finished(rep)
	return nil
}
