package compress

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func randVec(r *rand.Rand, d int) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = r.NormFloat64()
	}
	return v
}

func sq(v []float64) float64 {
	var s float64
	for _, a := range v {
		s += a * a
	}
	return s
}

// ‖x − topk(x)‖² ≤ (1 − k/d)‖x‖² for every x.
func TestTopKContraction(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 7, 100, 1000} {
		for _, k := range []int{1, d / 3, d} {
			if k < 1 {
				continue
			}
			top, err := NewTopK(k)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				x := randVec(r, d)
				idx, val := top.Compress(x, nil, nil)
				if len(idx) != k {
					t.Fatalf("kept %d, want %d", len(idx), k)
				}
				rest := append([]float64(nil), x...)
				for n, i := range idx {
					if val[n] != x[i] {
						t.Fatal("value differs from the coordinate")
					}
					rest[i] = 0
				}
				if lhs, rhs := sq(rest), (1-float64(k)/float64(d))*sq(x); lhs > rhs*(1+1e-12) {
					t.Errorf("d=%d k=%d: ‖x − topk(x)‖² = %g > (1 − k/d)‖x‖² = %g", d, k, lhs, rhs)
				}
			}
		}
	}
	if _, err := NewTopK(0); err == nil {
		t.Error("k = 0 accepted")
	}
}

// Error feedback loses nothing: the messages sent plus the error left equal
// the sum of the inputs.
func TestFeedbackIdentity(t *testing.T) {
	const d, k = 200, 10
	r := rand.New(rand.NewPCG(3, 4))
	top, _ := NewTopK(k)
	fb := NewFeedback(d, top)
	sum, sent := make([]float64, d), make([]float64, d)
	var idx []int
	var val []float64
	for range 30 {
		a := randVec(r, d)
		for i := range a {
			sum[i] += a[i]
		}
		idx, val = fb.Step(a, idx, val)
		for n, i := range idx {
			sent[i] += val[n]
		}
	}
	for i := range sum {
		if math.Abs(sent[i]+fb.Error()[i]-sum[i]) > 1e-9 {
			t.Fatalf("coordinate %d: sent %g + error %g != sum %g", i, sent[i], fb.Error()[i], sum[i])
		}
	}
	fb.Reset()
	if sq(fb.Error()) != 0 {
		t.Error("Reset left an error")
	}
}

// The sketch of a weighted sum is the weighted sum of the sketches.
func TestSketchLinearity(t *testing.T) {
	const d = 500
	r := rand.New(rand.NewPCG(5, 6))
	s, err := NewCountSketch(d, 5, 40, 99)
	if err != nil {
		t.Fatal(err)
	}
	x, y := randVec(r, d), randVec(r, d)
	a, b := 0.3, -1.7
	comb := make([]float64, d)
	for i := range comb {
		comb[i] = a*x[i] + b*y[i]
	}
	t1 := make([]float64, s.Size())
	s.Add(t1, 1, comb)
	t2 := make([]float64, s.Size())
	s.Add(t2, a, x)
	s.Add(t2, b, y)
	for k := range t1 {
		if math.Abs(t1[k]-t2[k]) > 1e-10 {
			t.Fatalf("cell %d: %g vs %g", k, t1[k], t2[k])
		}
	}
	// The sparse path agrees with the dense one.
	idx, val := []int{3, 77, 401}, []float64{1.5, -2, 0.25}
	dense := make([]float64, d)
	for n, i := range idx {
		dense[i] = val[n]
	}
	t3, t4 := make([]float64, s.Size()), make([]float64, s.Size())
	s.Add(t3, 2, dense)
	s.AddSparse(t4, 2, idx, val)
	for k := range t3 {
		if t3[k] != t4[k] {
			t.Fatal("AddSparse differs from Add")
		}
	}
	// Same seed, same operator.
	s2, _ := NewCountSketch(d, 5, 40, 99)
	t5 := make([]float64, s.Size())
	s2.Add(t5, 1, comb)
	for k := range t1 {
		if t1[k] != t5[k] {
			t.Fatal("two sketches from one seed differ")
		}
	}
}

// A row's estimate of x_i is unbiased over the hashes: its mean over many
// seeds is within 5 standard errors of x_i.
func TestSketchUnbiased(t *testing.T) {
	const d, c, seeds = 50, 8, 4000
	r := rand.New(rand.NewPCG(7, 8))
	x := randVec(r, d)
	for _, i := range []int{0, 13, 49} {
		var sum, sum2 float64
		table := make([]float64, c)
		for seed := range seeds {
			s, _ := NewCountSketch(d, 1, c, uint64(seed))
			clear(table)
			s.Add(table, 1, x)
			e := s.RowEstimate(table, 0, i)
			sum += e
			sum2 += e * e
		}
		mean := sum / seeds
		sd := math.Sqrt((sum2/seeds - mean*mean) / seeds)
		if math.Abs(mean-x[i]) > 5*sd {
			t.Errorf("coordinate %d: mean estimate %g, true %g, standard error %g", i, mean, x[i], sd)
		}
	}
}

// Planted heavy hitters are recovered, with their values close.
func TestSketchHeavyHitters(t *testing.T) {
	const d, k = 20000, 10
	r := rand.New(rand.NewPCG(9, 10))
	x := randVec(r, d)
	for i := range x {
		x[i] *= 0.01
	}
	planted := map[int]bool{}
	for len(planted) < k {
		i := r.IntN(d)
		if !planted[i] {
			planted[i] = true
			x[i] = 5 + float64(len(planted))
		}
	}
	s, _ := NewCountSketch(d, 5, 2000, 11)
	table := make([]float64, s.Size())
	s.Add(table, 1, x)
	idx, val := s.HeavyHitters(table, k, nil, nil)
	for n, i := range idx {
		if !planted[i] {
			t.Errorf("recovered %d, not planted", i)
		}
		if math.Abs(val[n]-x[i]) > 0.5 {
			t.Errorf("coordinate %d: estimate %g, true %g", i, val[n], x[i])
		}
	}
}

// Sparse embeddings: Apply and ApplyT are adjoint, and Column is Sᵀe_k.
func TestSparseEmbedding(t *testing.T) {
	const r, d = 7, 60
	rr := rand.New(rand.NewPCG(1, 1))
	e, err := NewSparseEmbedding(r, d, 3)
	if err != nil {
		t.Fatal(err)
	}
	x, w := randVec(rr, d), randVec(rr, r)
	sx := make([]float64, r)
	e.Apply(sx, x)
	stw := make([]float64, d)
	e.ApplyT(stw, w)
	var a, b float64
	for k := range sx {
		a += sx[k] * w[k]
	}
	for i := range x {
		b += x[i] * stw[i]
	}
	if math.Abs(a-b) > 1e-10 {
		t.Errorf("⟨Sx, w⟩ = %g, ⟨x, Sᵀw⟩ = %g", a, b)
	}
	col := make([]float64, d)
	e.Column(col, 2)
	unit := make([]float64, r)
	unit[2] = 1
	e.ApplyT(stw, unit)
	for i := range col {
		if col[i] != stw[i] {
			t.Fatal("Column differs from Sᵀe_k")
		}
	}
	if _, err := NewSparseEmbedding(0, 3, 1); err == nil {
		t.Error("zero rows accepted")
	}
}

// The quickselect agrees with a full sort, ties included.
func TestTopIndicesMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for trial := range 200 {
		d := 1 + r.IntN(60)
		x := make([]float64, d)
		for i := range x {
			x[i] = float64(r.IntN(7) - 3) // many ties
			if trial%2 == 0 {
				x[i] = r.NormFloat64()
			}
		}
		k := 1 + r.IntN(d)
		got, _ := topIndices(x, k, nil, nil)
		order := make([]int, d)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(math.Abs(x[b]), math.Abs(x[a])) })
		want := append([]int(nil), order[:k]...)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("x=%v k=%d: got %v, want %v", x, k, got, want)
		}
	}
}

// SetError restores a saved error (a checkpointed run) and refuses one of
// another dimension.
func TestFeedbackSetError(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	top, _ := NewTopK(2)
	a, b := NewFeedback(6, top), NewFeedback(6, top)
	a.Step(randVec(r, 6), nil, nil)
	saved := append([]float64(nil), a.Error()...)
	if err := b.SetError(saved); err != nil {
		t.Fatal(err)
	}
	x := randVec(r, 6)
	ia, va := a.Step(x, nil, nil)
	ib, vb := b.Step(x, nil, nil)
	if !slices.Equal(ia, ib) || !slices.Equal(va, vb) || !slices.Equal(a.Error(), b.Error()) {
		t.Error("a feedback with a restored error steps differently")
	}
	saved[0] = 42
	if b.Error()[0] == 42 {
		t.Error("SetError keeps the caller's slice")
	}
	if err := b.SetError(make([]float64, 5)); err == nil {
		t.Error("an error of another dimension accepted")
	}
}
