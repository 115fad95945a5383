package models

import (
	"math"
	"sync"
	"testing"
)

// The clones of a model share one pool of workspaces: interleaving the
// calls of several clients on one workspace, batch sizes changing in
// between, gives the bits each client gets from a model of its own, and a
// pool only ever holds as many workspaces as calls ran at once.
func TestWorkspacesArePooledAcrossClones(t *testing.T) {
	r := testRand(t, 5)
	proto := smallCNN(0.01)
	base := MTLDA([]Classifier[float64]{proto, proto}, 0.01, 0.001)
	d := randomData(r, 300, 16, 4) // larger than one chunk
	const clients = 4
	xs, us, ls := make([][]float64, clients), make([][]float64, clients), make([][]float64, clients)
	for i := range clients {
		xs[i], us[i], ls[i] = randomVec(r, base.DimX(), 1), randomVec(r, base.DimX(), 1), randomVec(r, base.DimLambda(), 1)
	}
	idx := []int{3, 1, 4, 1, 5, 9, 2, 6}
	// calls runs one client's sequence of calls and returns its outputs.
	calls := func(m Bilevel[float64], i int) []float64 {
		var out []float64
		g := make([]float64, m.DimX())
		out = append(out, m.InnerGrad(g, xs[i], ls[i], d, idx))
		out = append(out, g...)
		out = append(out, m.InnerLoss(xs[i], ls[i], d, nil), m.Accuracy(xs[i], ls[i], d, nil))
		m.InnerHVP(g, xs[i], ls[i], d, idx, us[i])
		out = append(out, g...)
		c := make([]float64, m.DimLambda())
		m.(Linearizer[float64]).Linearize(xs[i], ls[i], d, idx).Products(g, c, us[i])
		return append(append(out, g...), c...)
	}
	want := make([][]float64, clients)
	for i := range clients {
		want[i] = calls(base.Clone(), i) // a fresh pool each
	}
	shared := base.Clone()
	models := make([]Bilevel[float64], clients)
	for i := range models {
		models[i] = shared.Clone()
	}
	pool := shared.(*mixture[float64]).bases[0].(*Net[float64]).pool
	for round := range 2 {
		for i := range clients {
			if got := calls(models[i], i); !sameFloats(got, want[i]) {
				t.Fatalf("round %d, client %d: outputs differ from the client's own model's", round, i)
			}
		}
	}
	// The two bases are clones of one net: a call holds two workspaces.
	if len(pool.idle) != 2 {
		t.Errorf("calls one at a time left %d workspaces in the pool, want 2", len(pool.idle))
	}
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := calls(models[i], i); !sameFloats(got, want[i]) {
				t.Errorf("concurrent client %d: outputs differ from the client's own model's", i)
			}
		}()
	}
	wg.Wait()
	if n := len(pool.idle); n < 2 || n > 2*clients {
		t.Errorf("%d workspaces in the pool after %d concurrent clients", n, clients)
	}
	for _, m := range models {
		for _, b := range m.(*mixture[float64]).bases {
			if b.(*Net[float64]).net != nil {
				t.Fatal("a model kept a workspace after its calls returned")
			}
		}
	}
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
