package experiments

import (
	"context"
	"errors"
	"fmt"
	"math"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/internal/vec"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/pdbo"
	"hgpsim/scenarios"
)

// hgpErrorWrap, when not nil, wraps the behaviour of client i for pair pi
// (tests record what each pair sees through it).
type hgpErrorWrap func(pi, i int, b optim.Behaviour) optim.Behaviour

// hgpErrorOne runs one (network, seed): the scenario of the seed with the
// experiment's own algorithm (hgpErrorAlg), built by package run like any
// training run and executed on the experiment's driver. A missing oracle at
// the chosen linearization is not an error: the result says why and
// carries no errors.
func hgpErrorOne(ctx context.Context, sc scenarios.Scenario, h *HGPError, env scenarios.Env, kind string, seed uint64, wrap hgpErrorWrap) (hgpErrorSeed, error) {
	topo := sc.Network.Topology
	if topo.Name != kind {
		topo = registry.Choose[graph.Topology](kind)
	}
	alg := &hgpErrorAlg{Spec: h, Network: kind, SGPRounds: sc.SGP.Rounds, WeightFloor: sc.SGP.WeightFloor, L2: l2Rate(sc.Model.Arch.Params), wrap: wrap}
	d := derive(sc, fmt.Sprintf("%s-seed%d", kind, seed), seed, "hgp-error", alg)
	d.Network.Topology = topo
	d.Data.Source = oneDimSource(sc.Data.Source, h)
	sink := &hgpErrorSink{alg: alg}
	err := execute(ctx, env, d, sink)
	p := alg.prog
	if err != nil && p != nil && p.pair >= 0 && p.pair < len(h.Pairs) {
		pr := h.Pairs[p.pair]
		err = fmt.Errorf("pair (%g, %g): %w", pr[0], pr[1], err)
	}
	switch {
	case err != nil && p == nil:
		return hgpErrorSeed{seed: seed}, err
	case err != nil:
		return p.out, err
	case sink.out == nil:
		return hgpErrorSeed{seed: seed}, fmt.Errorf("the run reported no %s phase", hgpErrorResultPhase)
	}
	return *sink.out, nil
}

// hgpErrorResultPhase is the last phase of a (network, seed): no rounds,
// its argument the outcome (hgpErrorRecord), so that the outcome reaches
// the experiment through the run's sink and is recorded with it — a run
// replayed from its folder (execute) has no program to ask.
const hgpErrorResultPhase = "hgp-error-result"

// hgpErrorSink is the sink of a (network, seed): while the run runs, the
// program records each pair's errors from the evaluated rounds; the
// outcome comes with the result phase, run or replayed.
type hgpErrorSink struct {
	alg *hgpErrorAlg
	out *hgpErrorSeed
}

func (s *hgpErrorSink) Evaluated(ev *optim.RoundEvent) error {
	if s.alg.prog == nil {
		return nil // replayed: the result phase carries the outcome
	}
	return s.alg.prog.evaluated(ev)
}

func (s *hgpErrorSink) Finished(rep *optim.PhaseReport) error {
	if rep.Spec.Name != hgpErrorResultPhase {
		return nil
	}
	var r hgpErrorRecord
	if err := optim.DecodeState(rep.Spec.Args, &r); err != nil {
		return err
	}
	out := r.seed()
	s.out = &out
	return nil
}

// hgpErrorRecord is hgpErrorSeed with exported fields, for the argument of
// the result phase.
type hgpErrorRecord struct {
	Seed   uint64
	Errors [][]float64
	Skip   *HGPErrorSkip
	Norm   float64
	Gap    float64
	GapErr *HGPErrorSkip
	Other  []float64
}

func (o hgpErrorSeed) record() hgpErrorRecord {
	return hgpErrorRecord{Seed: o.seed, Errors: o.errors, Skip: o.skip, Norm: o.norm, Gap: o.gap, GapErr: o.gapErr, Other: o.other}
}

func (r hgpErrorRecord) seed() hgpErrorSeed {
	return hgpErrorSeed{seed: r.Seed, errors: r.Errors, skip: r.Skip, norm: r.Norm, gap: r.Gap, gapErr: r.GapErr, other: r.Other}
}

// hgpErrorAlg is the algorithm of one (network, seed) of the experiment,
// known to it only (not registered): n clients, binary logistic regression
// with label weights λ = 0 (the model section gives its L2 rate), full
// batches; T rounds of SGP (Eq. 4b; T is the sgp section's rounds) at the
// constant step lr; then, when the oracle exists, M iterations of VR-HGP
// per (α, β) with the true p̄ and δ̄, each pair from the same tick T, so
// that all pairs see the same edge realizations (common random numbers).
//
// Its exported fields are what the run folder's scenario.yaml says of it.
type hgpErrorAlg struct {
	Spec    *HGPError `yaml:"experiment"`
	Network string    `yaml:"network"` // the network kind, for the records of missing oracles
	// SGPRounds is the sgp section's rounds T.
	SGPRounds int `yaml:"sgp_rounds"`
	// WeightFloor is sgp.weight_floor: it guards SGP and, through the
	// linearization, the estimators and both oracles.
	WeightFloor float64 `yaml:"weight_floor"`
	L2          float64 `yaml:"l2"`
	wrap        hgpErrorWrap
	// prog is the program Plan built, also the run's sink: the experiment
	// reads each pair's errors from it.
	prog *hgpErrorProgram
}

// Float32 tells validation that the algorithm computes in float32 under
// precision: float32 (its SGP and VR-HGP; the oracles stay float64).
func (*hgpErrorAlg) Float32() bool { return true }

func (*hgpErrorAlg) Server() bool       { return false }
func (*hgpErrorAlg) Validate(int) error { return nil }

// Sections implements optim.SectionOwner: the SGP rounds are the sgp
// section's.
func (*hgpErrorAlg) Sections() []string { return []string{"sgp"} }

// Plan implements optim.Algorithm: the SGP clients, and the program that
// swaps each client's behaviour for each pair's VR-HGP estimator.
func (a *hgpErrorAlg) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	n := s.Net.N
	base := models.NewLogistic[float64](1, a.L2)
	lambda := []float64{0, 0}
	x0 := make([]float64, base.Dim())
	base.Init(x0, rng.New(s.Seed, rng.Global, rng.PurposeInit))
	cfg := pdbo.SGPConfig{Variant: pdbo.AfterComm, LR: optim.Schedule{Kind: "constant", Base: a.Spec.LR}, WeightFloor: a.WeightFloor}
	p := &hgpErrorProgram{a: a, net: s.Net, data: s.Data, x0: x0, seed: s.Seed, pair: -1,
		out: hgpErrorSeed{seed: s.Seed}, clients: make([]*pdbo.SGP[float64], n), got: make([][]float64, n)}
	beh := make([]optim.Behaviour, n)
	if s.Float32 != nil {
		// SGP and VR-HGP in float32 from x⁰ rounded; the oracles stay
		// float64, at the float32 iterates widened.
		base32 := models.NewLogistic[float32](1, a.L2)
		x32 := make([]float32, len(x0))
		vec.Narrow(x32, x0)
		p.model64, p.clients, p.clients32 = models.LabelWeights(base, 0), nil, make([]*pdbo.SGP[float32], n)
		for i := range p.clients32 {
			p.clients32[i] = pdbo.NewSGPBilevel(i, n, models.LabelWeights(base32, 0), lambda, s.Data[i], x32, cfg, s.Seed)
			beh[i] = p.clients32[i]
		}
	}
	for i := range p.clients {
		p.clients[i] = pdbo.NewSGPBilevel(i, n, models.LabelWeights(base, 0), lambda, s.Data[i], x0, cfg, s.Seed)
		beh[i] = p.clients[i]
	}
	factory, fixed := optim.FixedClients(beh)
	p.fixed = fixed
	p.sampling = pdbo.Alternate
	if a.Spec.Sampling == "simultaneous" {
		p.sampling = pdbo.Simultaneous
	}
	a.prog = p
	return factory, p, nil
}

// hgpErrorProgram runs SGP, linearizes at the chosen point, builds the
// oracle(s), then runs every (α, β) pair in turn; as the run's sink it
// records each pair's error against the oracle every iteration m.
type hgpErrorProgram struct {
	a       *hgpErrorAlg
	net     *graph.Network
	data    []datasets.ClientData
	x0      []float64
	seed    uint64
	clients []*pdbo.SGP[float64]
	// clients32, in a float32 run (in place of clients), and lins32 its
	// linearizations; model64 is the float64 model of the oracles.
	clients32 []*pdbo.SGP[float32]
	lins32    []pdbo.Linearization[float32]
	model64   models.Bilevel[float64]
	fixed     []*optim.Fixed
	sampling  pdbo.Sampling
	lins      []pdbo.Linearization[float64] // at the chosen point
	oracle    [][]float64
	other     [][]float64 // the oracle at the other point (oracle_gap), or nil
	pair      int         // the pair running; −1 before the first
	errs      []float64   // its errors, m = 0 … M
	got       [][]float64
	out       hgpErrorSeed
}

// Next implements optim.Program.
func (p *hgpErrorProgram) Next(done *optim.PhaseReport) (*optim.PhaseSpec, error) {
	h := p.a.Spec
	switch {
	case done == nil:
		return &optim.PhaseSpec{Name: "sgp", Rounds: p.a.SGPRounds, Tick: 0}, nil
	case done.Spec.Name == hgpErrorResultPhase:
		return nil, nil
	case done.Spec.Name == "sgp":
		if err := p.linearize(); err != nil {
			return nil, err
		}
		if p.out.skip != nil {
			return p.result()
		}
		p.out.errors = make([][]float64, len(h.Pairs))
		if p.other != nil {
			p.out.other = make([]float64, len(h.Pairs))
		}
	default:
		p.out.errors[p.pair] = p.errs
		if p.other != nil {
			p.out.other[p.pair] = stackedGap(p.got, p.other)
		}
	}
	p.pair++
	if p.pair == len(h.Pairs) {
		return p.result()
	}
	pr := h.Pairs[p.pair]
	for i, l := range p.lins {
		var e pdbo.HyperEstimator
		if p.lins32 != nil {
			e = pdbo.NewVRHGP(p.lins32[i], pr[0], pr[1], p.sampling)
		} else {
			e = pdbo.NewVRHGP(l, pr[0], pr[1], p.sampling)
		}
		p.got[i] = e.Estimate()
		p.fixed[i].Behaviour = e
		if p.a.wrap != nil {
			p.fixed[i].Behaviour = p.a.wrap(p.pair, i, e)
		}
	}
	p.errs = make([]float64, h.M+1)
	p.errs[0] = stackedGap(p.got, p.oracle)
	// Every pair starts at the tick right after SGP: all pairs of a seed
	// see the same edge realizations (common random numbers).
	per := p.sampling.Rounds(1)
	return &optim.PhaseSpec{Name: "hgp", Rounds: per * h.M, EvalEvery: per, Tick: int64(p.a.SGPRounds)}, nil
}

// result returns the result phase (hgpErrorResultPhase).
func (p *hgpErrorProgram) result() (*optim.PhaseSpec, error) {
	b, err := optim.EncodeState(p.out.record())
	if err != nil {
		return nil, err
	}
	return &optim.PhaseSpec{Name: hgpErrorResultPhase, Tick: optim.Continue, Args: b}, nil
}

// evaluated records the error of the running pair's estimates.
func (p *hgpErrorProgram) evaluated(ev *optim.RoundEvent) error {
	if ev.Phase != "hgp" {
		return nil
	}
	for i, st := range ev.Clients {
		p.got[i] = st.Hyper
	}
	p.errs[(ev.Round+1)/p.sampling.Rounds(1)] = stackedGap(p.got, p.oracle)
	return nil
}

// linearize linearizes every client at its last SGP iterate with the true
// p̄ and δ̄ and builds the oracle at the chosen point, and at the other one
// for the gap; a missing oracle at the chosen point leaves p.out.skip set.
func (p *hgpErrorProgram) linearize() error {
	h, out := p.a.Spec, &p.out
	pTrue := p.net.ExpectedPushWeights()
	n := p.net.N
	last := make([]pdbo.Linearization[float64], n)
	var last32 []pdbo.Linearization[float32]
	for i := range n {
		delta := make([]float64, n)
		for j := range delta {
			delta[j] = p.net.Delta(j, i)
		}
		if p.clients32 != nil {
			lin := p.clients32[i].Linearize(p.data[i].Val, h.LR, 0, p.seed)
			lin.Links, lin.PBar, lin.DeltaBar = nil, pTrue[i], delta
			last32 = append(last32, lin)
			last[i] = pdbo.Widen(lin, p.model64.Clone())
			continue
		}
		lin := p.clients[i].Linearize(p.data[i].Val, h.LR, 0, p.seed)
		lin.Links, lin.PBar, lin.DeltaBar = nil, pTrue[i], delta
		last[i] = lin
	}
	// Each linearization point and its oracle, computed only when needed:
	// the chosen one always, the other one for the gap.
	type point struct {
		name   string
		lins   []pdbo.Linearization[float64]
		lins32 []pdbo.Linearization[float32]
		oracle [][]float64
		miss   *HGPErrorSkip
	}
	build := func(name string) (*point, error) {
		pt := &point{name: name, lins: last, lins32: last32}
		if name == "fixed-point" {
			fixed := append([]pdbo.Linearization[float64](nil), last...)
			z, omega, err := pdbo.ExpectedFixedPoint(fixed, pTrue, p.x0, 1000000, 1e-13)
			if err != nil {
				pt.miss = &HGPErrorSkip{Network: p.a.Network, Seed: p.seed, At: name, Status: "no-fixed-point", Reason: err.Error()}
				return pt, nil
			}
			for i := range fixed {
				fixed[i].Z, fixed[i].Omega = z[i], omega[i]
			}
			if last32 != nil {
				// The float32 estimators run at y* rounded, and the
				// oracle at the same point.
				pt.lins32 = append([]pdbo.Linearization[float32](nil), last32...)
				for i := range fixed {
					z32, z64 := make([]float32, len(z[i])), make([]float64, len(z[i]))
					vec.Narrow(z32, z[i])
					vec.Widen(z64, z32)
					pt.lins32[i].Z, pt.lins32[i].Omega = z32, omega[i]
					fixed[i].Z = z64
				}
			}
			pt.lins = fixed
		}
		o, err := pdbo.FixedPointOracle(pt.lins)
		var oe *pdbo.OracleError
		switch {
		case errors.As(err, &oe):
			pt.miss = &HGPErrorSkip{Network: p.a.Network, Seed: p.seed, At: name, Status: oe.Status(),
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
		return err
	}
	if h.OracleGap {
		otherName := "fixed-point"
		if h.Linearize == "fixed-point" {
			otherName = "last"
		}
		other, err := build(otherName)
		if err != nil {
			return err
		}
		switch {
		case chosen.miss != nil:
			out.gapErr = chosen.miss
		case other.miss != nil:
			out.gapErr = other.miss
		default:
			out.gap = stackedGap(chosen.oracle, other.oracle)
			p.other = other.oracle
		}
	}
	if chosen.miss != nil {
		out.skip = chosen.miss
		return nil
	}
	p.lins, p.lins32, p.oracle = chosen.lins, chosen.lins32, chosen.oracle
	for i := range p.oracle {
		for _, v := range p.oracle[i] {
			out.norm += v * v
		}
	}
	out.norm = math.Sqrt(out.norm)
	return nil
}
