package optim

import (
	"math"
	"strings"
	"testing"

	"hgpsim/datasets"
	"hgpsim/internal/registry"
)

// The bounds are the widest the families had before they shared the
// struct: their edges pass, one step beyond fails naming the key.
func TestFederatedTrainingBounds(t *testing.T) {
	base := FederatedTraining{Rounds: 1, Participation: 1, LocalSteps: 1, LR: 0.1, Batch: 0, EvalEvery: 0}
	for name, tc := range map[string]struct {
		edit func(*FederatedTraining)
		n    int
		want string // "" for valid
	}{
		"lower edges":     {func(*FederatedTraining) {}, 2, ""},
		"upper edges":     {func(f *FederatedTraining) { f.Rounds, f.LocalSteps, f.Batch = 10_000_000, 1_000_000, 1<<20 }, 3, ""},
		"rounds 0":        {func(f *FederatedTraining) { f.Rounds = 0 }, 3, "rounds"},
		"rounds above":    {func(f *FederatedTraining) { f.Rounds = 10_000_001 }, 3, "rounds"},
		"local_steps 0":   {func(f *FederatedTraining) { f.LocalSteps = 0 }, 3, "local_steps"},
		"local_steps big": {func(f *FederatedTraining) { f.LocalSteps = 1_000_001 }, 3, "local_steps"},
		"lr 0":            {func(f *FederatedTraining) { f.LR = 0 }, 3, "lr"},
		"lr NaN":          {func(f *FederatedTraining) { f.LR = math.NaN() }, 3, "lr"},
		"lr Inf":          {func(f *FederatedTraining) { f.LR = math.Inf(1) }, 3, "lr"},
		"eval_every -1":   {func(f *FederatedTraining) { f.EvalEvery = -1 }, 3, "eval_every"},
		"participation 0": {func(f *FederatedTraining) { f.Participation = 0 }, 3, "participation"},
		"batch -1":        {func(f *FederatedTraining) { f.Batch = -1 }, 3, "batch"},
		"batch above":     {func(f *FederatedTraining) { f.Batch = 1<<20 + 1 }, 3, "batch"},
		"no client":       {func(*FederatedTraining) {}, 1, "client"},
	} {
		f := base
		tc.edit(&f)
		err := f.Validate(tc.n)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error naming %q", name, err, tc.want)
		}
	}
}

// Embedded inline, the struct contributes its six keys once each, with
// their docs, before the embedding struct's own.
func TestFederatedTrainingInlineParams(t *testing.T) {
	type family struct {
		FederatedTraining `yaml:",inline"`
		Mu                float64 `yaml:"mu" doc:"own"`
	}
	var keys []string
	for _, p := range registry.Params(&family{FederatedTraining: FederatedTraining{Rounds: 7}}) {
		if p.Doc == "" {
			t.Errorf("%s has no doc", p.Key)
		}
		if p.Key == "rounds" && p.Default != "7" {
			t.Errorf("rounds default %s, want 7", p.Default)
		}
		keys = append(keys, p.Key)
	}
	if got, want := strings.Join(keys, " "), "rounds participation local_steps lr batch eval_every mu"; got != want {
		t.Errorf("keys %q, want %q", got, want)
	}
}

// Evaluate leaves a split without rows out (zeros, eval not called) and
// passes through what eval reports on one with rows.
func TestEvaluate(t *testing.T) {
	calls := 0
	eval := func(d *datasets.Dataset) (float64, float64) { calls++; return float64(d.N) / 2, 0.25 }
	for _, d := range []*datasets.Dataset{nil, {}} {
		if n, l, a := Evaluate(d, eval); n != 0 || l != 0 || a != 0 {
			t.Errorf("empty split: got (%d, %v, %v), want zeros", n, l, a)
		}
	}
	if calls != 0 {
		t.Fatalf("eval called %d times on empty splits", calls)
	}
	if n, l, a := Evaluate(&datasets.Dataset{N: 6}, eval); n != 6 || l != 3 || a != 0.25 || calls != 1 {
		t.Errorf("got (%d, %v, %v) after %d calls, want (6, 3, 0.25) after 1", n, l, a, calls)
	}
}
