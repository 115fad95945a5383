package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"hgpsim/internal/vec"
)

// kernelOf is the signature every implementation of every kernel in F
// shares (kernel and kernel32).
type kernelOf[F Float] = func(m, n, k int, a []F, lda int, b []F, ldb int, c []F, ldc int)

// impl is one way to compute a kernel; the tests hold every implementation
// to the reference loop's bits.
type impl[F Float] struct {
	name string
	f    kernelOf[F]
}

// kind describes one kernel in F: its reference loop, its implementations,
// its exported entry point and the shapes of its operands.
type kind[F Float] struct {
	name  string
	ref   kernelOf[F]
	impls []impl[F]
	api   kernelOf[F]
	// aRows, aCols and bRows, bCols give the operand shapes for m, n, k.
	aShape, bShape func(m, n, k int) (rows, cols int)
	// overwrite says the kernel sets C instead of adding to it.
	overwrite bool
}

func mk(m, n, k int) (int, int) { return m, k }
func km(m, n, k int) (int, int) { return k, m }
func kn(m, n, k int) (int, int) { return k, n }
func nk(m, n, k int) (int, int) { return n, k }

// kindsOf lists the four kernels in F with every implementation of each.
func kindsOf[F Float]() []kind[F] {
	return []kind[F]{
		{"DotNT", dotNTRef[F], append([]impl[F]{{"go", dotNTGo[F]}}, archImpls[F]("DotNT")...), DotNT[F], mk, nk, true},
		{"AccNN", accNNRef[F], append([]impl[F]{{"go", accNNGo[F]}}, archImpls[F]("AccNN")...), AccNN[F], mk, kn, false},
		{"AccTN", accTNRef[F], append([]impl[F]{{"go", accTNGo[F]}}, archImpls[F]("AccTN")...), AccTN[F], km, kn, false},
		{"AccNT", accNTRef[F], append([]impl[F]{{"go", accNTGo[F]}}, archImpls[F]("AccNT")...), AccNT[F], mk, nk, false},
	}
}

var kinds = kindsOf[float64]()

// bothTypes runs a test in float64 and in float32, each as a subtest.
func bothTypes(t *testing.T, f64 func(*testing.T), f32 func(*testing.T)) {
	t.Run("float64", f64)
	t.Run("float32", f32)
}

// is32 reports whether F is float32.
func is32[F Float]() bool { return unsafe.Sizeof(F(0)) == 4 }

// filler draws matrix elements in F: normals scaled over 60 decades (16 in
// float32, whose range is narrower), and, when special is set, a few signed
// zeros, subnormals, infinities and NaNs.
type filler[F Float] struct {
	r       *rand.Rand
	special bool
}

func (f filler[F]) value() F {
	if is32[F]() {
		return F(f.value32())
	}
	x := f.r.NormFloat64() * math.Pow(10, float64(f.r.IntN(60)-30))
	if !f.special {
		return F(x)
	}
	switch u := f.r.IntN(200); {
	case u < 4:
		return F(math.Copysign(0, float64(u%2)-0.5))
	case u < 7:
		return F(math.Copysign(math.SmallestNonzeroFloat64*float64(1+f.r.IntN(1000)), x))
	case u < 9:
		return F(2.2e-308 * x) // mostly subnormal
	case u == 9:
		return F(math.Inf(1 - 2*(u%2)))
	case u == 10:
		return F(math.Inf(-1))
	case u == 11:
		return F(math.NaN())
	}
	return F(x)
}

// value32 is value in float32: its subnormals lie below 1.2e-38, and
// products of two normals near 1e±8 can still underflow into them.
func (f filler[F]) value32() float32 {
	x := float32(f.r.NormFloat64() * math.Pow(10, float64(f.r.IntN(16)-8)))
	if !f.special {
		return x
	}
	switch u := f.r.IntN(200); {
	case u < 4:
		return float32(math.Copysign(0, float64(u%2)-0.5))
	case u < 7:
		return float32(math.Copysign(math.SmallestNonzeroFloat32*float64(1+f.r.IntN(1000)), float64(x)))
	case u < 9:
		return 1.1e-38 * x // subnormal where |x| < 1, else small normal
	case u == 9:
		return float32(math.Inf(1))
	case u == 10:
		return float32(math.Inf(-1))
	case u == 11:
		return float32(math.NaN())
	}
	return x
}

// matrix returns a rows × cols matrix with leading dimension cols+pad; the
// padding holds NaN, so a kernel that reads it shows up in its results.
func (f filler[F]) matrix(rows, cols, pad int) ([]F, int) {
	ld := cols + pad
	s := make([]F, max(0, (rows-1)*ld+cols))
	for i := range s {
		if i%ld < cols {
			s[i] = f.value()
		} else {
			s[i] = F(math.NaN())
		}
	}
	return s, ld
}

// sameBits compares bit for bit, except that any two NaNs match: which
// operand's payload survives depends on operand order, which the Go
// compiler may swap in a commutative product or sum (package doc).
func sameBits[F Float](x, y F) bool {
	return bits(x) == bits(y) || x != x && y != y
}

// bits returns x's bit pattern.
func bits[F Float](x F) uint64 {
	if is32[F]() {
		return uint64(math.Float32bits(float32(x)))
	}
	return math.Float64bits(float64(x))
}

// check runs every implementation of kd on one shape and compares C (and
// the untouched padding of C) with the reference bit for bit.
func check[F Float](t *testing.T, kd kind[F], f filler[F], m, n, k, pad int) {
	t.Helper()
	ar, ac := kd.aShape(m, n, k)
	br, bc := kd.bShape(m, n, k)
	a, lda := f.matrix(ar, ac, pad)
	b, ldb := f.matrix(br, bc, pad+1)
	c0, ldc := f.matrix(m, n, pad+2)
	for i := range c0 {
		if i%ldc >= n {
			// A NaN would hide writes into the padding: sums with it
			// stay NaN, which sameBits accepts.
			c0[i] = -0.75
		}
	}
	if kd.overwrite {
		// Old values of C must not leak into DotNT's results.
		for i := range c0 {
			if i%ldc < n {
				c0[i] = F(math.NaN())
			}
		}
	}
	want := append([]F(nil), c0...)
	kd.ref(m, n, k, a, lda, b, ldb, want, ldc)
	for _, im := range kd.impls {
		got := append([]F(nil), c0...)
		im.f(m, n, k, a, lda, b, ldb, got, ldc)
		for i := range want {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("%s/%s m=%d n=%d k=%d pad=%d special=%v: c[%d,%d] = %v (%#x), reference %v (%#x)",
					kd.name, im.name, m, n, k, pad, f.special, i/ldc, i%ldc,
					got[i], bits(got[i]), want[i], bits(want[i]))
			}
		}
	}
}

// TestSmallShapesBitIdentical covers every m, n, k up to 13 (17 in
// float32): all the edge tiles of the blocked kernels and every tail
// length of dot order.
func TestSmallShapesBitIdentical(t *testing.T) {
	t.Logf("AVX2 kernels available: %v", vec.HasAVX2())
	bothTypes(t, smallShapes[float64], smallShapes[float32])
}

func smallShapes[F Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	size := 14
	if is32[F]() {
		size = 18
	}
	for _, kd := range kindsOf[F]() {
		for m := range size {
			for n := range size {
				for k := range size {
					check(t, kd, filler[F]{r, false}, m, n, k, (m+n+k)%3)
					check(t, kd, filler[F]{r, true}, m, n, k, 1+(m+n+k)%2)
				}
			}
		}
	}
}

// TestLargeShapesBitIdentical covers shapes that cross the cache blocks
// (k panels, column blocks, AccNT's packed panel) with odd remainders, and
// the models' shapes.
func TestLargeShapesBitIdentical(t *testing.T) {
	bothTypes(t, largeShapes[float64], largeShapes[float32])
}

func largeShapes[F Float](t *testing.T) {
	shapes := [][3]int{
		{37, 61, 129}, {128, 64, 784}, {64, 784, 128}, {10, 784, 128}, {128, 10, 784},
		{67, 135, 513}, {13, 259, 601}, {200, 33, 257}, {7, 3, 1031}, {20, 30, 100}, {50, 70, 40},
		// Packed products over several k panels and column blocks with
		// a narrow last sliver (odd widths run masked tail tiles), and
		// few rows against long k.
		{203, 131, 531}, {97, 67, 300}, {150, 5, 520}, {3, 143, 777}, {16, 201, 600},
		// DotNT's packed pairs of B (float64 on ZMM, from 48 rows): a last
		// tile row of every height, widths with and without a packed tile,
		// one to three products left over after an odd number of steps.
		{49, 17, 527}, {50, 24, 182}, {51, 40, 13}, {52, 9, 527}, {53, 16, 101}, {48, 8, 5},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, kd := range kindsOf[F]() {
		for i, s := range shapes {
			check(t, kd, filler[F]{r, i%2 == 1}, s[0], s[1], s[2], 1+i%4)
		}
	}
}

// TestRandomShapesBitIdentical draws shapes on both sides of every
// blocking and dispatch threshold (packing from 24 or 96 rows and k of 32,
// 64 or 128, k panels of 128 and 256, column blocks of 64 and 128, the
// stack arrays' size classes, widths that leave one to three columns (one
// to seven in float32) to the masked tail tiles, few rows against long k).
func TestRandomShapesBitIdentical(t *testing.T) {
	bothTypes(t, randomShapes[float64], randomShapes[float32])
}

func randomShapes[F Float](t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	L := 32 / int(unsafe.Sizeof(F(0))) // lanes of a YMM register
	for _, kd := range kindsOf[F]() {
		for i := range 80 {
			m, n, k := 1+r.IntN(150), 1+r.IntN(150), 1+r.IntN(300)
			switch i % 4 {
			case 1:
				n = L*r.IntN(160/L) + 1 + r.IntN(L-1)
			case 2:
				m, k = 1+r.IntN(20), 200+r.IntN(600)
			}
			check(t, kd, filler[F]{r, r.IntN(2) == 0}, m, n, k, r.IntN(5))
		}
	}
}

// TestExportedMatchesReference checks the dispatched entry points, whatever
// the CPU and HGPSIM_NOAVX2 selected.
func TestExportedMatchesReference(t *testing.T) {
	bothTypes(t, exportedMatches[float64], exportedMatches[float32])
}

func exportedMatches[F Float](t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, kd := range kindsOf[F]() {
		kd.impls = []impl[F]{{"exported", kd.api}}
		check(t, kd, filler[F]{r, true}, 23, 29, 301, 2)
	}
}

// TestProductValues guards the reference loops themselves against an
// independent computation: small integers, for which every order is exact.
func TestProductValues(t *testing.T) {
	bothTypes(t, productValues[float64], productValues[float32])
}

func productValues[F Float](t *testing.T) {
	const m, n, k = 3, 4, 19 // k: two blocks of float32's dot order and a tail
	a := make([]F, m*k)      // m × k, also read as k × m for AccTN
	b := make([]F, k*n)      // k × n, also read as n × k for AccNT
	for i := range a {
		a[i] = F(i%7 - 3)
	}
	for i := range b {
		b[i] = F(i%5 - 2)
	}
	for _, kd := range kindsOf[F]() {
		for _, im := range kd.impls {
			c := make([]F, m*n)
			for i := range c {
				c[i] = 1
			}
			_, acols := kd.aShape(m, n, k)
			_, bcols := kd.bShape(m, n, k)
			im.f(m, n, k, a, acols, b, bcols, c, n)
			for i := range m {
				for j := range n {
					want := F(1)
					if kd.overwrite {
						want = 0
					}
					for p := range k {
						var x, y F
						switch kd.name {
						case "AccTN":
							x = a[p*m+i]
						default:
							x = a[i*k+p]
						}
						switch kd.name {
						case "AccNN", "AccTN":
							y = b[p*n+j]
						default:
							y = b[j*k+p]
						}
						want += x * y
					}
					if c[i*n+j] != want {
						t.Fatalf("%s/%s: c[%d,%d] = %v, want %v", kd.name, im.name, i, j, c[i*n+j], want)
					}
				}
			}
		}
	}
}

func TestBadShapesPanic(t *testing.T) {
	s := make([]float64, 12)
	cases := []struct {
		name    string
		m, n, k int
		lda     int
		ldb     int
		ldc     int
		a, b, c []float64
	}{
		{"negative m", -1, 2, 2, 2, 2, 2, s, s, s},
		{"negative k", 2, 2, -1, 2, 2, 2, s, s, s},
		{"short lda", 2, 2, 3, 2, 3, 2, s, s, s},
		{"short ldc", 2, 3, 2, 3, 3, 2, s, s, s},
		{"short a", 5, 2, 3, 3, 3, 2, s, s, s},
		{"short c", 2, 2, 2, 2, 2, 2, s, s, s[:3]},
	}
	for _, kd := range kinds {
		for _, tc := range cases {
			lda, ldb := tc.lda, tc.ldb
			t.Run(fmt.Sprintf("%s/%s", kd.name, tc.name), func(t *testing.T) {
				defer func() {
					if recover() == nil {
						t.Fatal("no panic")
					}
				}()
				// AccTN's A is k × m: its leading dimension must cover m.
				if kd.name == "AccTN" && tc.name == "short lda" {
					lda = 1
				}
				kd.api(tc.m, tc.n, tc.k, tc.a, lda, tc.b, ldb, tc.c, tc.ldc)
			})
		}
	}
}

// TestEmptyShapesAcceptNilSlices: a zero dimension needs no storage.
func TestEmptyShapesAcceptNilSlices(t *testing.T) {
	for _, kd := range kinds {
		kd.api(0, 0, 0, nil, 0, nil, 0, nil, 0)
		kd.api(0, 3, 4, nil, 4, make([]float64, 16), 4, nil, 3)
	}
	for _, kd := range kinds {
		kd.api(3, 0, 2, make([]float64, 9), 3, nil, 2, nil, 5) // n = 0
		if !kd.overwrite {
			kd.api(3, 2, 0, nil, 7, nil, 7, make([]float64, 6), 2) // k = 0
		}
	}
	c := []float64{7, 7, 7, 7, 7}
	DotNT(2, 2, 0, nil, 5, nil, 5, c, 3)
	for _, x := range []float64{c[0], c[1], c[3], c[4]} {
		if x != 0 || math.Signbit(x) {
			t.Fatalf("DotNT with k = 0 gives %v, want +0 (and c[2] untouched)", c)
		}
	}
	if c[2] != 7 {
		t.Fatalf("DotNT with k = 0 wrote into the padding: %v", c)
	}
}

// TestNoAllocations covers each size class of the stack arrays too.
func TestNoAllocations(t *testing.T) {
	bothTypes(t, noAllocations[float64], noAllocations[float32])
}

func noAllocations[F Float](t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	f := filler[F]{r, false}
	for _, s := range [][3]int{{37, 61, 300}, {20, 30, 100}, {5, 6, 7}, {128, 64, 200}} {
		m, n, k := s[0], s[1], s[2]
		for _, kd := range kindsOf[F]() {
			ar, ac := kd.aShape(m, n, k)
			br, bc := kd.bShape(m, n, k)
			a, lda := f.matrix(ar, ac, 1)
			b, ldb := f.matrix(br, bc, 1)
			c, ldc := f.matrix(m, n, 1)
			for _, im := range append(kd.impls, impl[F]{"exported", kd.api}) {
				if got := testing.AllocsPerRun(5, func() { im.f(m, n, k, a, lda, b, ldb, c, ldc) }); got != 0 {
					t.Errorf("%s/%s %d×%d×%d allocates %v times per call", kd.name, im.name, m, n, k, got)
				}
			}
		}
	}
}
