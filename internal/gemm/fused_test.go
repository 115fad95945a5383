package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/internal/vec"
)

// TestProductsRoundOnce holds every implementation of every kernel to the
// fused multiply-add of the package doc on products chosen so that
// rounding the product first and then the sum gives a different result
// on all of them: s with an odd last bit plus a product ± half of s's
// last place times (1 − 2⁻⁵²)·(1 + 2⁻⁵²) (float64) or (1 − 2⁻²³)·(1 + 2⁻²³)
// (float32), which a separate rounding turns into an exact tie. The
// expected value comes from vec.FMA (math.FMA, and a float32 FMA tested
// against big.Float), which the assembly kernels do not call; the pure-Go
// float32 loops do, so for them this checks the order, not the rounding.
func TestProductsRoundOnce(t *testing.T) {
	bothTypes(t, productsRoundOnce[float64], productsRoundOnce[float32])
}

// hardCase returns, for row i, the sum s, the factor x (A's element) and
// the factor y every output of the row multiplies x by (B's element).
func hardCase[F Float](r *rand.Rand) (s, x, y F) {
	eps := 0x1p-52
	if is32[F]() {
		eps = 0x1p-23
	}
	sv := F((1 + r.Float64()) * math.Ldexp(1, r.IntN(40)-20))
	if is32[F]() {
		sv = F(math.Float32frombits(math.Float32bits(float32(sv)) | 1))
	} else {
		sv = F(math.Float64frombits(math.Float64bits(float64(sv)) | 1))
	}
	_, e := math.Frexp(float64(sv))
	h := math.Ldexp(1, e-2-int(math.Round(-math.Log2(eps)))) // half of sv's last place
	xv, yv := F(h*(1-eps)), F(1+eps)                         // exact: h is a power of two
	// The product's sign picks the midpoint below s or the one above;
	// s's sign, the direction of "below".
	if r.IntN(2) == 0 {
		xv = -xv
	}
	if r.IntN(2) == 0 {
		return -sv, -xv, yv
	}
	return sv, xv, yv
}

func productsRoundOnce[F Float](t *testing.T) {
	const m, n = 13, 37 // tails in both directions of every tile shape
	r := rand.New(rand.NewPCG(7, 8))
	L := 4 // float64's dot-order lanes
	if is32[F]() {
		L = 16
	}
	s, x := make([]F, m), make([]F, m)
	var y F
	for i := range m {
		s[i], x[i], y = hardCase[F](r)
	}
	want := make([]F, m)
	twiceWrong := 0
	for i := range m {
		want[i] = vec.FMA(x[i], y, s[i])
		if F(F(x[i]*y)+s[i]) != want[i] {
			twiceWrong++
		}
	}
	if twiceWrong < m/4 {
		t.Fatalf("rounding twice is right on %d of %d cases: the test has no teeth", m-twiceWrong, m)
	}
	for _, kd := range kindsOf[F]() {
		// The product at position p1 follows s, placed at p0 (the dot
		// order) or in C (the chain order); p1 in the dot order's blocks
		// and in its remainder.
		for _, k := range []int{3, 2*L + 1} {
			p0, p1 := 0, 1
			if kd.overwrite {
				p0, p1 = 0, k-1
				if k == 3 {
					p0, p1, k = 0, L, 2*L
				}
			}
			ar, ac := kd.aShape(m, n, k)
			br, bc := kd.bShape(m, n, k)
			a, b := make([]F, ar*ac), make([]F, br*bc)
			at := func(i, p int) *F { // A(i, p)
				if kd.name == "AccTN" {
					return &a[p*m+i]
				}
				return &a[i*k+p]
			}
			bt := func(p, j int) *F { // B(p, j)
				if kd.name == "AccNN" || kd.name == "AccTN" {
					return &b[p*n+j]
				}
				return &b[j*k+p]
			}
			for i := range m {
				*at(i, p1) = x[i]
				if kd.overwrite {
					*at(i, p0) = s[i]
				}
			}
			for j := range n {
				*bt(p1, j) = y
				if kd.overwrite {
					*bt(p0, j) = 1
				}
			}
		impls:
			for _, im := range kd.impls {
				c := make([]F, m*n)
				for i := range m {
					for j := range n {
						c[i*n+j] = s[i]
					}
				}
				im.f(m, n, k, a, ac, b, bc, c, n)
				for i := range m {
					for j := range n {
						if !sameBits(c[i*n+j], want[i]) {
							t.Errorf("%s/%s k=%d: c[%d,%d] = %v, want %v (x·y + s rounded once)", kd.name, im.name, k, i, j, c[i*n+j], want[i])
							continue impls
						}
					}
				}
			}
		}
	}
}
