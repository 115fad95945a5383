package fedbio

import (
	"fmt"
	"testing"

	"hgpsim/graph"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/optimtest"
)

// The Comm-FedBiO family runs its training as one long phase and is
// checkpointed between rounds of that phase. These tests cut the phase into two parts, save every client after
// the first, load the states into freshly built clients and run the second
// part on a fresh driver: the events, results and final states must be
// those of one driver running both parts.

// fedCase is an algorithm of the family with the setup it runs on.
type fedCase struct {
	alg   optim.Algorithm
	setup func(t *testing.T) *optim.Setup
}

func fedCases() map[string]fedCase {
	star := &graph.Star{Prob: 1, ToHub: 0.7, FromHub: 0.85}
	bio := func(t *testing.T) *optim.Setup { return fedBioSetup(t, 3, star, "non-iid") }
	train := optim.FederatedTraining{Rounds: 3, Participation: 0.67, LocalSteps: 2, LR: 0.1, Batch: 8, EvalEvery: 1}
	comm := func(hyper, comp string) *CommFedBiO {
		return &CommFedBiO{FederatedTraining: train, Hypergradient: hyper, Compressor: comp, Compression: 4,
			Iterations: 3, Alpha: 0.3, SketchRows: 2, Ratio: 2, HVPBatch: 10, OuterLR: 0.5, Scale: "per-sample"}
	}
	return map[string]fedCase{
		"comm-fedbio-iter-none":   {comm("iterative", "none"), bio},
		"comm-fedbio-iter-topk":   {comm("iterative", "topk"), bio},
		"comm-fedbio-iter-sketch": {comm("iterative", "sketch"), bio},
		"comm-fedbio-non-iter":    {comm("non-iterative", "topk"), bio},
		"comm-fedbio-none":        {comm("none", "topk"), bio},
		"fedavg-oracle":           {&FedAvgOracle{FederatedTraining: train}, bio},
		"fedbio-preprocess": {&FedBioPreprocess{FederatedTraining: train, BenchSteps: 20, BenchLR: 0.5, Threshold: 0.3},
			bio},
	}
}

// fedRun runs the case's phases from states (when not nil).
func fedRun(t *testing.T, c fedCase, phases optim.Phases, states [][]byte) (*optimtest.Recorder, [][]byte) {
	t.Helper()
	return optimtest.Run(t, c.alg, c.setup(t), phases, states)
}

// fedPhases returns the case's program as one training phase, after the
// phases before it (preprocess), and its period (the runtime rounds of one
// outer iteration). It is built here, not taken from Plan, whose program
// may cut the training phase into parts.
func fedPhases(t *testing.T, c fedCase) (pre []optim.PhaseSpec, main optim.PhaseSpec, period int) {
	t.Helper()
	var train optim.FederatedTraining
	switch a := c.alg.(type) {
	case *CommFedBiO:
		train, period = a.FederatedTraining, 4+2*(a.Iterations-1)
		switch a.Hypergradient {
		case "non-iterative":
			period = 6
		case "none":
			period = 2
		}
	case *FedAvgOracle:
		train, period = a.FederatedTraining, 2
	case *FedBioPreprocess:
		train, period = a.FederatedTraining, 2
		pre = []optim.PhaseSpec{{Name: "preprocess", Rounds: 2, Tick: optim.Continue}}
	default:
		t.Fatalf("%T: not an algorithm of the family", c.alg)
	}
	return pre, optim.PhaseSpec{Name: "comm-fedbio", Rounds: period * train.Rounds, EvalEvery: period * train.EvalEvery, Tick: optim.Continue}, period
}

// A run cut at any round of its training phase and continued on freshly
// built clients from their saved states reports, bit for bit, what one
// driver running both parts reports, and ends in the same states. Cuts at
// outer-iteration boundaries that are evaluated rounds are also checked
// against the uncut run's evaluations.
func TestFedBioResumeIsBitIdentical(t *testing.T) {
	for name, c := range fedCases() {
		t.Run(name, func(t *testing.T) {
			pre, main, period := fedPhases(t, c)
			setup := func() *optim.Setup { return c.setup(t) }
			optimtest.CheckResumeAtEveryRound(t, c.alg, setup, pre, main, period)
		})
	}
}

// fedStates runs the case up to round cut of its training phase and
// returns the clients' states and a fresh server and client 1 and 2.
func fedStates(t *testing.T, c fedCase, cut int) ([][]byte, []optim.Stateful) {
	t.Helper()
	pre, main, _ := fedPhases(t, c)
	a, _ := optimtest.CutAt(main, cut)
	_, states := fedRun(t, c, append(append(optim.Phases(nil), pre...), a), nil)
	return states, freshParts(t, c.alg, c.setup(t))
}

func freshParts(t *testing.T, alg optim.Algorithm, s *optim.Setup) []optim.Stateful {
	t.Helper()
	return optimtest.Parts(t, alg, s, 3)
}

// LoadState refuses, with an error and without changing the part, a
// state that does not fit.
func TestFedBioLoadStateRejectsMismatches(t *testing.T) {
	cases := fedCases()
	reject := optimtest.Reject
	for _, name := range []string{"comm-fedbio-iter-topk", "comm-fedbio-iter-sketch", "comm-fedbio-non-iter", "fedbio-preprocess"} {
		t.Run(name, func(t *testing.T) {
			c := cases[name]
			_, main, period := fedPhases(t, c)
			cut := period + 3 // inside the second outer iteration's call
			if cut >= main.Rounds {
				cut = main.Rounds - 1
			}
			states, _ := fedStates(t, c, cut)
			optimtest.CheckServerStates(t, states, func() []optim.Stateful { return freshParts(t, c.alg, c.setup(t)) })
		})
	}

	// Another variant or algorithm of the family.
	stateOf := func(name string) [][]byte {
		c := cases[name]
		_, main, _ := fedPhases(t, c)
		st, _ := fedStates(t, c, main.Rounds/2)
		return st
	}
	topk, sketch, nonIter := stateOf("comm-fedbio-iter-topk"), stateOf("comm-fedbio-iter-sketch"), stateOf("comm-fedbio-non-iter")
	oracle := stateOf("fedavg-oracle")
	sketchParts := freshParts(t, cases["comm-fedbio-iter-sketch"].alg, cases["comm-fedbio-iter-sketch"].setup(t))
	for i := range 2 {
		reject(t, fmt.Sprintf("top-k %d into sketch", i), sketchParts[i], topk[i], "compressor topk")
		reject(t, fmt.Sprintf("non-iterative %d into sketch", i), sketchParts[i], nonIter[i], "non-iterative")
		reject(t, fmt.Sprintf("oracle %d into sketch", i), sketchParts[i], oracle[i], "fedavg-oracle")
	}
	// A state of another algorithm that fits the fields: refused by its kind.
	type foreign struct {
		Kind string
		X    []float64
	}
	for i, kind := range []string{"fedavg-server", "fedavg-client"} {
		st := corrupted(t, sketch[i], func(st *foreign) { st.Kind = kind })
		reject(t, kind+" into sketch", sketchParts[i], st, kind)
	}

	// Another model (an MLP: another d) or other data sizes.
	other := func(name string, mod func(s *optim.Setup)) []optim.Stateful {
		c := cases[name]
		s := c.setup(t)
		mod(s)
		return freshParts(t, c.alg, s)
	}
	mlp := func(s *optim.Setup) {
		s.Model = models.Plain(models.NewMLP[float64](4, 2, 3, 1e-3))
		s.X0 = make([]float64, s.Model.DimX())
		s.Model.Init(s.X0, rng.New(5, rng.Global, rng.PurposeInit))
	}
	for _, name := range []string{"comm-fedbio-iter-sketch", "comm-fedbio-non-iter"} {
		st := map[string][][]byte{"comm-fedbio-iter-sketch": sketch, "comm-fedbio-non-iter": nonIter}[name]
		ps := other(name, mlp)
		reject(t, name+" server into another model", ps[0], st[0], "length")
		reject(t, name+" client into another model", ps[1], st[1], "length")
	}
	fewer := other("comm-fedbio-iter-sketch", func(s *optim.Setup) {
		d := *s.Data[1].Train
		d.N--
		s.Data[1].Train = &d
		s.Data[1].Noisy = s.Data[1].Noisy[:d.N]
	})
	reject(t, "client into fewer samples", fewer[1], sketch[1], "λ")

	// Corrupt fields.
	corruptServer := func(what string, to optim.Stateful, b []byte, f func(st *serverState), want string) {
		reject(t, what, to, corrupted(t, b, f), want)
	}
	corruptClient := func(what string, to optim.Stateful, b []byte, f func(st *clientState), want string) {
		reject(t, what, to, corrupted(t, b, f), want)
	}
	srv, cl := sketchParts[0], sketchParts[1]
	corruptServer("server: client 0 sampled", srv, sketch[0], func(st *serverState) { st.Hyper = []int{0} }, "client 0")
	corruptServer("server: client 4 sampled", srv, sketch[0], func(st *serverState) { st.Train = []int{1, 4} }, "client 4")
	corruptServer("server: too large a sample", srv, sketch[0], func(st *serverState) { st.Train = []int{1, 2, 3} }, "sample")
	corruptServer("server: repeated sample", srv, sketch[0], func(st *serverState) { st.Train = []int{2, 2} }, "ascending")
	corruptServer("server: short sketch error", srv, sketch[0], func(st *serverState) { st.ErrTab = st.ErrTab[1:] }, "sketch error")
	corruptServer("server: no v", srv, sketch[0], func(st *serverState) { st.V = nil }, "v")
	corruptServer("server: an ω̂", srv, sketch[0], func(st *serverState) { st.Omega = []float64{1} }, "ω̂")
	corruptServer("server: corrupt stream", srv, sketch[0], func(st *serverState) { st.RNG = st.RNG[:3] }, "stream")
	corruptServer("server: negative counts", srv, sketch[0], func(st *serverState) { st.UpMsgs = -1 }, "negative")
	niSrv := freshParts(t, cases["comm-fedbio-non-iter"].alg, cases["comm-fedbio-non-iter"].setup(t))[0]
	corruptServer("non-iterative server: ω̂ of another r1", niSrv, nonIter[0], func(st *serverState) { st.Omega = append(st.Omega, 1, 1) }, "ω̂")
	corruptClient("client: λ > 1", cl, sketch[1], func(st *clientState) { st.Lambda[3] = 1.5 }, "λ_3")
	corruptClient("client: λ NaN", cl, sketch[1], func(st *clientState) { st.Lambda[0] = nan() }, "λ_0")
	corruptClient("client: HVP row out of range", cl, sketch[1], func(st *clientState) { st.Hidx[0] = 40 }, "HVP rows")
	corruptClient("client: HVP row twice", cl, sketch[1], func(st *clientState) { st.Hidx[1] = st.Hidx[0] }, "HVP rows")
	corruptClient("client: HVP rows short", cl, sketch[1], func(st *clientState) { st.Hidx = st.Hidx[1:] }, "HVP rows")
	corruptClient("client: minibatch order", cl, sketch[1], func(st *clientState) { st.Batch.Perm[0] = st.Batch.Perm[1] }, "permutation")
	corruptClient("client: minibatch position", cl, sketch[1], func(st *clientState) { st.Batch.Pos = len(st.Batch.Perm) + 1 }, "permutation")
	corruptClient("client: minibatch stream", cl, sketch[1], func(st *clientState) { st.Batch.RNG = nil }, "minibatch stream")
	corruptClient("client: HVP-row stream", cl, sketch[1], func(st *clientState) { st.HyperR = []byte("x") }, "HVP-row stream")
	topkCl := freshParts(t, cases["comm-fedbio-iter-topk"].alg, cases["comm-fedbio-iter-topk"].setup(t))[1]
	corruptClient("top-k client: short error", topkCl, topk[1], func(st *clientState) { st.TopkErr = st.TopkErr[1:] }, "top-k error")
	oracleCl := freshParts(t, cases["fedavg-oracle"].alg, cases["fedavg-oracle"].setup(t))[1]
	corruptClient("oracle client: another λ", oracleCl, oracle[1], func(st *clientState) {
		for j := range st.Lambda {
			st.Lambda[j] = 1 - st.Lambda[j]
		}
	}, "oracle")
	noneCl := freshParts(t, cases["comm-fedbio-none"].alg, cases["comm-fedbio-none"].setup(t))[1]
	none := stateOf("comm-fedbio-none")
	corruptClient("client without hyper-gradient: in a call", noneCl, none[1], func(st *clientState) { st.InCall = true }, "call")
	// A preprocess client whose filter kept other rows: the saved
	// minibatch order must cover exactly the rows λ keeps.
	pp := stateOf("fedbio-preprocess")
	ppCl := freshParts(t, cases["fedbio-preprocess"].alg, cases["fedbio-preprocess"].setup(t))[1]
	corruptClient("preprocess client: λ keeps another count", ppCl, pp[1], func(st *clientState) {
		for j := range st.Lambda {
			if st.Lambda[j] == 0 {
				st.Lambda[j] = 1
				return
			}
		}
		st.Lambda[0] = 0
	}, "permutation")

}

// corrupted returns the state b (of type S) changed by f.
func corrupted[S any](t *testing.T, b []byte, f func(*S)) []byte {
	t.Helper()
	var st S
	if err := optim.DecodeState(b, &st); err != nil {
		t.Fatal(err)
	}
	f(&st)
	bad, err := optim.EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

func nan() float64 {
	var z float64
	return z / z
}
