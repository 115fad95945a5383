package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// The fused passes of a group norm and its max pool give the bits of the
// layers run one after the other, in every primitive and every order the
// primitives may come in: VJPR reusing a fused VJP's backpropagation,
// VJPInput with the norm first, batches whose groups are not a multiple
// of eight, odd planes the pool drops an edge of, convolutions before the
// norm with chunks of one and of two samples (blocks of 8 and 16, the
// last one partial), and inputs with zeros (every window a tie),
// infinities and NaNs.
func TestFusedNormPoolSameBits(t *testing.T) {
	cases := []struct {
		in    Shape
		specs []Spec
		n     int
	}{
		{Shape{1, 28, 28}, normNet(3), 11},
		{Shape{2, 9, 9}, []Spec{Conv2D(4, 3, 1, 1), GroupNorm(2), MaxPool2D(2, 2), ReLU(), Dense(3)}, 9},
		{Shape{2, 10, 11}, []Spec{GroupNorm(1), MaxPool2D(2, 2), ReLU(), Conv2D(3, 2, 1, 0), GroupNorm(3), ReLU(), MaxPool2D(2, 2), Dense(3)}, 17},
	}
	for k, c := range cases {
		for special := range 3 {
			name := fmt.Sprintf("case %d inputs %d", k, special)
			compareFused[float64](t, name, c.in, c.specs, c.n, special)
			compareFused[float32](t, name+" f32", c.in, c.specs, c.n, special)
		}
	}
}

func compareFused[F gemm.Float](t *testing.T, name string, in Shape, specs []Spec, n int, special int) {
	t.Helper()
	defer func(v bool) { fuseLayers = v }(fuseLayers)
	var want [][]F
	for _, fused := range []bool{false, true} {
		fuseLayers = fused
		got := fusedSequence[F](t, in, specs, n, special)
		if !fused {
			want = got
			continue
		}
		for i := range got {
			if raceBuild {
				// Any two NaNs count as equal there (see raceBuild).
				for j, v := range got[i] {
					if v != v && want[i][j] != want[i][j] {
						got[i][j] = want[i][j]
					}
				}
			}
			if !sameBits(got[i], want[i]) {
				t.Errorf("%s: result %d differs fused", name, i)
			}
		}
	}
}

// fusedSequence runs the primitives on a new net in several orders and
// returns their results.
func fusedSequence[F gemm.Float](t *testing.T, in Shape, specs []Spec, n int, special int) [][]F {
	t.Helper()
	const classes = 3
	net, err := New[F](in, specs, classes)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, uint64(n)))
	dim, ins := net.Dim(), n*in.Size()
	x := make([]F, dim)
	net.Init(x, r)
	u := convert[F](randVec(r, dim, 0.1))
	a := convert[F](randVec(r, ins, 1))
	switch special {
	case 1: // sample 0 all zeros, sample 1 scaled up
		clear(a[:in.Size()])
		big := 1e150
		if !vec.Is64[F]() {
			big = 1e30
		}
		for i := range in.Size() {
			a[in.Size()+i] *= F(big)
		}
	case 2: // an infinity and a NaN
		a[2*in.Size()+5] = F(math.Inf(1))
		a[3*in.Size()+7] = F(math.NaN())
	}
	g, rg := convert[F](randVec(r, n*classes, 1)), convert[F](randVec(r, n*classes, 1))
	g2 := convert[F](randVec(r, n*classes, 1))
	labels := make([]int, n)
	for i := range labels {
		labels[i] = r.IntN(classes)
	}
	var out [][]F
	vec := func(size int) []F {
		v := make([]F, size)
		out = append(out, v)
		return v
	}
	net.Logits(vec(n*classes), x, a, n)
	net.VJPInput(vec(dim), vec(ins), x, g)
	net.JVP(vec(n*classes), x, u)
	net.VJPR(vec(dim), x, u, g, rg) // reuses VJP's backpropagation
	net.VJPRInput(vec(dim), vec(ins), x, u, g, rg)
	net.VJPR(vec(dim), x, u, g2, rg)
	net.VJP(vec(dim), x, g)
	net.VJPR(vec(dim), x, u, g, rg)
	loss := net.Grad(vec(dim), x, a, labels, 0.01)
	out = append(out, []F{F(loss)})
	net.JVP(vec(n*classes), x, u) // after Grad's forward pass
	net.VJPR(vec(dim), x, u, g, rg)
	net.HVP(vec(dim), x, a, labels, 0.01, u)
	net.Logits(vec(n*classes), x, a, n)
	net.VJP(vec(dim), x, g)
	net.VJP(vec(dim), x, g2)
	net.JVP(vec(n*classes), x, u)
	net.VJPRInput(vec(dim), vec(ins), x, u, g2, rg) // reuses a VJP without input gradient
	return out
}
