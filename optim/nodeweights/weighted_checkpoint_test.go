package nodeweights

import (
	"bytes"
	"testing"

	"hgpsim/datasets"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fed"
	"hgpsim/optim/optimtest"
)

// weightedAlgs are the weighted-nodes paper's algorithms, small, with
// outer outer iterations.
func weightedAlgs(outer int) map[string]func() optim.Algorithm {
	common := fed.WeightedCommon{Outer: outer, Epochs: 1, Tau: 3, LR: 0.1, Batch: 8}
	return map[string]func() optim.Algorithm{
		"weighted-nodes": func() optim.Algorithm {
			return &WeightedNodes{WeightedCommon: common, SVRGParam: SVRGParam{Q: 0.1}, HLR: 0.05, Eta: 0.5, Cap: 0.4, Method: "projected"}
		},
		"weighted-nodes-average": func() optim.Algorithm {
			return &WeightedNodes{WeightedCommon: common, SVRGParam: SVRGParam{Q: 0.1}, HLR: 0.05, Eta: 0.5, Cap: 0.4, Method: "projected",
				Output: "average", Mu: 0.5}
		},
		"aba": func() optim.Algorithm {
			return &WeightedNodes{WeightedCommon: common, SVRGParam: SVRGParam{Q: 0.1}, HLR: 0.05, Eta: 0.5, Cap: 0.4, Method: "aba"}
		},
		"local-svrg": func() optim.Algorithm {
			return &LocalSVRG{Baseline: fed.Baseline{WeightedCommon: common}, SVRGParam: SVRGParam{Q: 0.1}}
		},
		"local-train": func() optim.Algorithm {
			return &LocalTrain{Baseline: fed.Baseline{WeightedCommon: common}, SVRGParam: SVRGParam{Q: 0.1}}
		},
		"ditto": func() optim.Algorithm {
			return &fed.Ditto{Baseline: fed.Baseline{WeightedCommon: common}, Lambda: 0.1, PersonalSteps: 5}
		},
		"pfedme": func() optim.Algorithm {
			return &fed.PFedMe{Baseline: fed.Baseline{WeightedCommon: common}, Lambda: 5, Beta: 1, InnerSteps: 5, Delta: 0.005, PersonalLR: 0.05}
		},
	}
}

// statefulOf returns what holds c's state: c, or the behaviour of a
// Fixed client.
func statefulOf(c optim.Client) (optim.Stateful, bool) {
	if f, ok := c.(*optim.Fixed); ok {
		st, ok := f.Behaviour.(optim.Stateful)
		return st, ok
	}
	st, ok := c.(optim.Stateful)
	return st, ok
}

// weightedStates plans alg on s, runs it when run is set, and returns its
// clients' states (Stateful through statefulOf) and their saved states.
func weightedStates(t *testing.T, alg optim.Algorithm, s *optim.Setup, run bool) ([]optim.Stateful, [][]byte) {
	t.Helper()
	if err := alg.Validate(s.Net.N); err != nil {
		t.Fatal(err)
	}
	var clients []optim.Client
	if run {
		clients, _ = optimtest.Execute(t, alg, s, nil, &reportSink{f: func(*optim.PhaseReport) {}}, nil)
	} else {
		factory, _, err := alg.Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		for i := range s.Net.N {
			c, err := factory(i)
			if err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
		}
	}
	sts := make([]optim.Stateful, len(clients))
	saved := make([][]byte, len(clients))
	for i, c := range clients {
		st, ok := statefulOf(c)
		if !ok {
			t.Fatalf("client %d (%T) is not Stateful", i, c)
		}
		b, err := st.SaveState()
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		sts[i], saved[i] = st, b
	}
	return sts, saved
}

// TestWeightedStateRoundTrip loads the states of a run into fresh clients,
// which then save the same bytes.
func TestWeightedStateRoundTrip(t *testing.T) {
	const k = 3
	for name, mk := range weightedAlgs(2) {
		_, saved := weightedStates(t, mk(), weightedSetup(t, k, 0.01, nil, nil), true)
		fresh, _ := weightedStates(t, mk(), weightedSetup(t, k, 0.01, nil, nil), false)
		for i, st := range fresh {
			if err := st.LoadState(saved[i]); err != nil {
				t.Fatalf("%s client %d: %v", name, i, err)
			}
			b, err := st.SaveState()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, saved[i]) {
				t.Errorf("%s client %d: the loaded state saves differently", name, i)
			}
		}
	}
}

// TestWeightedLoadStateRejectsMisfits loads states that do not fit — of
// another dimension, other data sizes, another client, garbage, a
// minibatch order that is no permutation — and wants errors, not panics.
func TestWeightedLoadStateRejectsMisfits(t *testing.T) {
	const k = 3
	// Six features instead of four (another |θ|) and 50 training rows
	// instead of 40 (other minibatch orders).
	wide, err := datasets.Synthetic(datasets.SyntheticSpec{Clients: k + 1, Classes: 3, Features: 6,
		Train: 40, Val: 30, Test: 30, Alpha: 0.5, Separation: 1, Shift: 1, Noise: 1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	more, err := datasets.Synthetic(datasets.SyntheticSpec{Clients: k + 1, Classes: 3, Features: 4,
		Train: 50, Val: 35, Test: 30, Alpha: 0.5, Separation: 1, Shift: 1, Noise: 1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for name, mk := range weightedAlgs(2) {
		sts, own := weightedStates(t, mk(), weightedSetup(t, k, 0.01, nil, nil), true)
		_, wideStates := weightedStates(t, mk(), weightedSetup(t, k, 0.01, models.Plain(models.NewSoftmax[float64](6, 3, 0.01)), wide), true)
		_, moreStates := weightedStates(t, mk(), weightedSetup(t, k, 0.01, nil, more), true)
		for _, i := range []int{0, 1} {
			misfits := map[string][]byte{
				"garbage":        []byte("not a state"),
				"another client": own[1-i],
			}
			if name != "local-train" || i == 0 {
				// local-train's nodes are idle: every empty state fits.
				misfits["another dimension"] = wideStates[i]
			}
			if i == 1 && name != "local-train" || i == 0 && (name == "ditto" || name == "local-train") {
				// The clients that draw minibatches.
				misfits["other data sizes"] = moreStates[i]
			}
			for what, b := range misfits {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s client %d, a state of %s: panic %v", name, i, what, r)
						}
					}()
					if err := sts[i].LoadState(b); err == nil {
						t.Errorf("%s client %d (%T) loaded a state of %s", name, i, sts[i], what)
					}
				}()
			}
		}
	}
}

// TestWeightedLoadStateRejectsBadPermutation corrupts the minibatch order
// of a node's saved state.
func TestWeightedLoadStateRejectsBadPermutation(t *testing.T) {
	s := weightedSetup(t, 3, 0.01, nil, nil)
	a := weightedAlgs(2)["weighted-nodes"]()
	sts, saved := weightedStates(t, a, s, true)
	var st wnNodeState
	if err := optim.DecodeState(saved[1], &st); err != nil {
		t.Fatal(err)
	}
	st.SVRG.Batch.Perm[0] = st.SVRG.Batch.Perm[1]
	b, err := optim.EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := sts[1].LoadState(b); err == nil {
		t.Error("a node loaded a minibatch order with a repeated example")
	}
	st.SVRG.Batch.Perm[0] = len(st.SVRG.Batch.Perm)
	if b, err = optim.EncodeState(st); err != nil {
		t.Fatal(err)
	}
	if err := sts[1].LoadState(b); err == nil {
		t.Error("a node loaded a minibatch order with an example out of range")
	}
}
