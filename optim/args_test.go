package optim

import (
	"math"
	"slices"
	"strings"
	"testing"
)

type testArgs struct {
	Warm  bool      `wire:"1"`
	Draws []int     `wire:"2"`
	Lr    float64   `wire:"3"`
	X     []float64 `wire:"4"`
}

func TestArgsRoundTrip(t *testing.T) {
	p := &PhaseSpec{Name: "sgp"}
	want := testArgs{Warm: true, Draws: []int{3, -1, 0}, Lr: math.Copysign(0, -1), X: []float64{math.NaN(), 1}}
	PutArgs(p, want)
	got, err := ArgsOf[testArgs](p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Warm != want.Warm || !slices.Equal(got.Draws, want.Draws) || math.Float64bits(got.Lr) != math.Float64bits(want.Lr) ||
		math.Float64bits(got.X[0]) != math.Float64bits(want.X[0]) || got.X[1] != 1 {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// Zero arguments cost nothing and read back as zero.
	PutArgs(p, testArgs{})
	if p.Args != nil {
		t.Errorf("zero arguments encode as %x", p.Args)
	}
	if got, err := ArgsOf[testArgs](&PhaseSpec{}); err != nil || got.Warm || got.Draws != nil {
		t.Errorf("no arguments read as %+v, %v", got, err)
	}
}

func TestResultsOf(t *testing.T) {
	rs := []Result{PutResult(testArgs{Lr: 1}), {}, PutResult(testArgs{Draws: []int{7}})}
	got, err := ResultsOf[testArgs](rs)
	if err != nil || got[0].Lr != 1 || got[1].Lr != 0 || got[2].Draws[0] != 7 {
		t.Fatalf("got %+v, %v", got, err)
	}
	// A result of another type whose field 1 is not a bool fails, naming
	// the client.
	rs[1] = Result{Data: EncodeArgs(struct {
		S string `wire:"1"`
	}{"x"})}
	if _, err := ResultsOf[testArgs](rs); err == nil || !strings.Contains(err.Error(), "client 1") {
		t.Errorf("mismatched result: %v", err)
	}
}
