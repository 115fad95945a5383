package optim

import (
	"slices"
	"strings"
	"testing"
)

// A filled buffer keeps its contents through the next Fill (the receivers
// of the previous round may still read it) and is reused, without
// allocation, by the one after.
func TestSendBuffersAlternate(t *testing.T) {
	var b SendBuffers
	first := b.Fill([]float64{1, 2}, nil, []float64{3})
	second := b.Fill([]float64{4})
	if !slices.Equal(first, []float64{1, 2, 3}) || !slices.Equal(second, []float64{4}) {
		t.Fatalf("Fill gave %v then %v, want [1 2 3] then [4]", first, second)
	}
	third := b.Fill([]float64{5, 6})
	if &third[0] != &first[0] {
		t.Error("the third Fill did not reuse the first buffer")
	}
	if !slices.Equal(second, []float64{4}) {
		t.Errorf("the second message changed to %v by the third Fill", second)
	}
	if a := testing.AllocsPerRun(100, func() { b.Fill([]float64{7, 8}) }); a != 0 {
		t.Errorf("Fill allocates %v times in steady state", a)
	}
}

func TestRoundHalvesAndSampleSize(t *testing.T) {
	for i, want := range []struct {
		down bool
		ex   int
	}{{true, 0}, {false, 0}, {true, 1}, {false, 1}, {true, 2}} {
		r := &Round{Index: i}
		if r.Down() != want.down || r.Up() == want.down || r.Exchange() != want.ex {
			t.Errorf("round %d: down %v, up %v, exchange %d; want down %v, exchange %d", i, r.Down(), r.Up(), r.Exchange(), want.down, want.ex)
		}
	}
	for _, c := range []struct {
		frac float64
		m    int
		want int
	}{{0.1, 10, 1}, {0.01, 10, 1}, {0.25, 10, 3}, {0.5, 7, 4}, {1, 6, 6}} {
		if got := SampleSize(c.frac, c.m); got != c.want {
			t.Errorf("SampleSize(%v, %d) = %d, want %d", c.frac, c.m, got, c.want)
		}
	}
}

func TestValidateServer(t *testing.T) {
	for _, c := range []struct {
		part      float64
		batch, n  int
		wantError string
	}{
		{1, 0, 2, ""},
		{0.1, 1 << 20, 100, ""},
		{0, 8, 5, "participation"},
		{1.5, 8, 5, "participation"},
		{0.5, -1, 5, "batch"},
		{0.5, 1<<20 + 1, 5, "batch"},
		{0.5, 8, 1, "server"},
	} {
		err := ValidateServer(c.part, c.batch, c.n)
		if c.wantError == "" && err != nil || c.wantError != "" && (err == nil || !strings.Contains(err.Error(), c.wantError)) {
			t.Errorf("ValidateServer(%v, %d, %d) = %v, want an error naming %q", c.part, c.batch, c.n, err, c.wantError)
		}
	}
}
