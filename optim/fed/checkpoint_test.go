package fed

import (
	"testing"

	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/optimtest"
)

// The algorithms that run their training as one long phase are
// checkpointed between its rounds. These tests cut the phase into two
// parts, save every client after the first, load the states into freshly
// built clients and run the second part on a fresh driver: the events and
// final states must be those of one driver running both parts.

type resumeCase struct {
	alg   optim.Algorithm
	setup func(t *testing.T) *optim.Setup
}

func resumeCases() map[string]resumeCase {
	star := &graph.Star{Prob: 1, ToHub: 0.7, FromHub: 0.85}
	avg := FedAvg{optim.FederatedTraining{Rounds: 6, Participation: 0.5, LocalSteps: 2, LR: 0.1, Batch: 8, EvalEvery: 2}}
	avgSetup := func(t *testing.T) *optim.Setup { return fedAvgSetup(t, 4, star) }
	return map[string]resumeCase{
		"fedavg":  {&avg, avgSetup},
		"fedprox": {&FedProx{FedAvg: avg, Mu: 0.3}, avgSetup},
		// The adaptive server steps at a large η, so that their state
		// moves the model visibly.
		"fedadam":    {&FedAdam{SecondMoment{Adaptive{avg, 0.3, 0.9, 1e-3}, 0.99}}, avgSetup},
		"fedyogi":    {&FedYogi{SecondMoment{Adaptive{avg, 0.3, 0.9, 1e-3}, 0.99}}, avgSetup},
		"fedadagrad": {&FedAdagrad{Adaptive{avg, 0.3, 0.9, 1e-3}}, avgSetup},
	}
}

// mainPhase is the case's training as one phase (Plan's program may cut
// it into parts).
func mainPhase(t *testing.T, c resumeCase) optim.PhaseSpec {
	t.Helper()
	_, prog, err := c.alg.Plan(c.setup(t))
	if err != nil {
		t.Fatal(err)
	}
	p := *prog.(*optim.Phases)
	whole := p[0]
	whole.Rounds, whole.Continued, whole.Offset, whole.Total = whole.TotalRounds(), false, 0, 0
	return whole
}

// TestResumeIsBitIdentical cuts the training phase after every round; a
// communication round is two runtime rounds (down, up).
func TestResumeIsBitIdentical(t *testing.T) {
	for name, c := range resumeCases() {
		t.Run(name, func(t *testing.T) {
			setup := func() *optim.Setup { return c.setup(t) }
			optimtest.CheckResumeAtEveryRound(t, c.alg, setup, nil, mainPhase(t, c), 2)
		})
	}
}

// LoadState refuses, with an error and without changing the part, a
// state that does not fit.
func TestLoadStateRejectsMisfits(t *testing.T) {
	reject := optimtest.Reject
	fresh := func(c resumeCase, s *optim.Setup) []optim.Stateful { return optimtest.Parts(t, c.alg, s, 3) }
	cases := resumeCases()
	saved := map[string][][]byte{}
	for name, c := range cases {
		main := mainPhase(t, c)
		a, _ := optimtest.CutAt(main, 3) // between a down and an up round
		_, saved[name] = optimtest.Run(t, c.alg, c.setup(t), optim.Phases{a}, nil)
		optimtest.CheckServerStates(t, saved[name], func() []optim.Stateful { return fresh(c, c.setup(t)) })
		// Another model: another d.
		s := c.setup(t)
		s.Model = models.Plain(models.NewSoftmax[float64](4, 2, 1e-3))
		s.X0 = make([]float64, s.Model.DimX())
		other := fresh(c, s)
		reject(t, name+": server into another model", other[0], saved[name][0], "length")
		reject(t, name+": client into another model", other[1], saved[name][1], "length")
	}
	fa := fresh(cases["fedavg"], cases["fedavg"].setup(t))

	// Corrupt parts of FedAvg's states.
	var ms meanState
	if err := optim.DecodeState(saved["fedavg"][0], &ms); err != nil {
		t.Fatal(err)
	}
	enc := func(v any) []byte {
		b, err := optim.EncodeState(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bs := ms
	bs.Sampled.Sampler.Chosen = []int{5}
	reject(t, "fedavg server: client 5 sampled", fa[0], enc(bs), "client 5")
	bs = ms
	bs.Sampled.Sampler.RNG = nil
	reject(t, "fedavg server: corrupt stream", fa[0], enc(bs), "stream")
	var cs clientState
	if err := optim.DecodeState(saved["fedavg"][1], &cs); err != nil {
		t.Fatal(err)
	}
	var ss sgdState
	if err := optim.DecodeState(cs.Trainer, &ss); err != nil {
		t.Fatal(err)
	}
	client := func(s sgdState) []byte { return enc(clientState{Picked: cs.Picked, Trainer: enc(s)}) }
	bc := ss
	bc.Batch.Perm = append([]int{len(ss.Batch.Perm)}, ss.Batch.Perm...)
	reject(t, "fedavg client: minibatch order over more data", fa[1], client(bc), "")
	bc = ss
	bc.Batch.Perm = append([]int(nil), ss.Batch.Perm...)
	bc.Batch.Perm[0] = -1
	reject(t, "fedavg client: minibatch order", fa[1], client(bc), "permutation")
	bc = ss
	bc.Batch.RNG = bc.Batch.RNG[:5]
	reject(t, "fedavg client: minibatch stream", fa[1], client(bc), "stream")
}
