package fbo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"

	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// stageKind is what one communication round does.
type stageKind uint8

const (
	stLowerA     stageKind = iota + 1 // up: q_i = ∇_yG_i(y^t) [and AggITD's r_i or z_i]
	stLowerB                          // down: q^t; One-Round-Lower; up: y_i
	stLowerLocal                      // down: y^t; τ_i local SGD steps; up: y_i (LFedNest)
	stP0                              // down: y^N; up: ∇_yF_i (FedNest's p₀)
	stNeumann                         // down: p_{t−1}; up: (I − λ∇²_yyG_i)p_{t−1}
	stHyper                           // down: p; up: h_i = ∇_xF_i − ∇²_xyG_i·p
	stUpper                           // down: h; One-Round-Upper; up: x_i
	stLocalUpper                      // down: y^N; local Neumann, h_i, τ local steps; up: x_i (LFedNest)
)

// stage is one communication round of a phase.
type stage struct {
	kind  stageKind
	iter  int  // outer iteration within the phase
	first bool // the server draws S (the iteration's first round; with redraw, more): the down message starts with x
	t     int  // lower iteration (stLowerA, stLowerB, stLowerLocal) or Neumann index
	q     int  // AggITD's Q for the iteration (-1: not AggITD)
	last  bool // the iteration's last Neumann round
}

// scheme is one of the three algorithms: its rounds and its client's
// local computations.
type scheme interface {
	params() *Params
	// draw returns the per-iteration draw of the program (Q or T'; -1
	// when the method draws nothing).
	draw(r *rand.Rand) int
	// schedule appends the communication rounds of one outer iteration
	// with draw d.
	schedule(st []stage, iter, d int) []stage
	// hyperP writes the p the server broadcasts in stHyper, from its
	// aggregates.
	hyperP(dst []float64, s *server)
}

// program runs K outer iterations in phases of eval_every.
type program struct {
	name string
	m    scheme
	done int
	r    *rng.Stream
}

// Next implements Program.
func (p *program) Next(*optim.PhaseReport) (*optim.PhaseSpec, error) {
	pp := p.m.params()
	if p.done >= pp.OuterSteps {
		return nil, nil
	}
	k := min(pp.EvalEvery, pp.OuterSteps-p.done)
	args := phaseArgs{Draws: make([]int, k)}
	var st []stage
	rounds := 0
	for j := range k {
		args.Draws[j] = p.m.draw(p.r.Rand)
		st = p.m.schedule(st[:0], j, args.Draws[j])
		rounds += len(st)
	}
	spec := &optim.PhaseSpec{Name: p.name, Rounds: 2 * rounds, Step: p.done, Tick: optim.Continue}
	optim.PutArgs(spec, args)
	p.done += k
	return spec, nil
}

// schedule is the rounds of one phase, built one outer iteration at a
// time (a phase may hold many iterations of many rounds each).
type schedule struct {
	m      scheme
	starts []int // communication round at which each iteration starts, and the total
	draws  []int
	iter   int
	cur    []stage
}

// phaseArgs are the arguments of a phase: the draw of each of its outer
// iterations (AggITD's Q, FedNest's T', −1 for LFedNest), made by the
// program so that server and clients know the schedule.
type phaseArgs struct {
	Draws []int `wire:"1"`
}

// phaseSchedule reads the schedule of a phase from its arguments.
func phaseSchedule(m scheme, spec *optim.PhaseSpec) (*schedule, error) {
	args, err := optim.ArgsOf[phaseArgs](spec)
	if err != nil {
		return nil, err
	}
	k := len(args.Draws)
	sc := &schedule{m: m, starts: make([]int, 1, k+1), draws: args.Draws, iter: -1}
	for j, d := range args.Draws {
		sc.cur = m.schedule(sc.cur[:0], j, d)
		sc.starts = append(sc.starts, sc.starts[j]+len(sc.cur))
	}
	if 2*sc.starts[k] != spec.Rounds {
		return nil, fmt.Errorf("phase %s: %d rounds, the schedule has %d", spec.Name, spec.Rounds, 2*sc.starts[k])
	}
	return sc, nil
}

// at returns communication round c of the phase.
func (sc *schedule) at(c int) stage {
	j := sort.SearchInts(sc.starts, c+1) - 1
	if j != sc.iter {
		sc.cur = sc.m.schedule(sc.cur[:0], j, sc.draws[j])
		sc.iter = j
	}
	return sc.cur[c-sc.starts[j]]
}

// plan builds the factory and program of a federated bilevel method.
func plan(name string, m scheme, s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	pp := m.params()
	n := s.Net.N
	clients := n - 1
	sample := optim.SampleSize(pp.Participation, clients)
	x0 := make([]float64, s.Model.DimLambda())
	if li, ok := s.Model.(models.LambdaInitializer); ok {
		li.InitLambda(x0, rng.New(s.Seed, 0, rng.PurposeInit))
	}
	for i := 1; i < n; i++ {
		if s.Data[i].Train == nil || s.Data[i].Train.N == 0 || s.Data[i].Val == nil || s.Data[i].Val.N == 0 {
			return nil, nil, fmt.Errorf("client %d has no training or validation data", i)
		}
	}
	factory := func(i int) (optim.Client, error) {
		if i == 0 {
			return &server{method: m, p: pp, x: slices.Clone(x0), y: slices.Clone(s.X0), m: clients, sample: sample,
				r: rng.NewStream(s.Seed, 0, rng.PurposeSample), model: s.Model.Clone(), test: s.Test}, nil
		}
		return newClient(i, m, s, x0), nil
	}
	return factory, &program{name: name, m: m, r: rng.NewStream(s.Seed, 0, rng.PurposeDraw)}, nil
}

func stageName(k stageKind) string {
	return [...]string{"", "lower-a", "lower-b", "lower-local", "p0", "neumann", "hyper", "upper", "local-upper"}[k]
}
