package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/internal/cpuid"
)

// special32 returns n float32s, a quarter of them special values (signed
// zeros, infinities, NaNs with payloads, subnormals, the extremes) and the
// rest of random magnitude and sign, so that a kernel that moved or added
// values other than bit for bit would show.
func special32(r *rand.Rand, n int) []float32 {
	sp := []float32{
		0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffa00000),
		math.Float32frombits(1), -math.Float32frombits(0x007fffff),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1, -1,
	}
	v := make([]float32, n)
	for i := range v {
		if r.IntN(4) == 0 {
			v[i] = sp[r.IntN(len(sp))]
			continue
		}
		v[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
	}
	return v
}

// sameBits32 returns the first index where a and b differ in bits, or −1;
// in a race build any two NaNs count as equal (see raceBuild).
func sameBits32(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) && !(raceBuild && a[i] != a[i] && b[i] != b[i]) {
			return i
		}
	}
	return -1
}

func needAVX(t *testing.T) {
	t.Helper()
	if !cpuid.Get().AVX2 {
		t.Skip("the processor has no AVX2: the float32 patch kernels never run here")
	}
}

// copyRuns32 and addRuns32 give the bits of plain Go loops for every run
// width (whole vectors of 8, a 4-wide part and scalar tails) and stride,
// and touch nothing between the runs.
func TestRuns32MatchGoLoops(t *testing.T) {
	needAVX(t)
	r := rand.New(rand.NewPCG(3, 1))
	for w := 1; w <= 27; w++ {
		for n := 1; n <= 3; n++ {
			ds, ss := w+r.IntN(5), w+r.IntN(5)
			src := special32(r, (n-1)*ss+w)
			dst := special32(r, (n-1)*ds+w+3)
			want, got := append([]float32(nil), dst...), append([]float32(nil), dst...)
			for i := range n {
				copy(want[i*ds:i*ds+w], src[i*ss:i*ss+w])
			}
			copyRuns32(n, w, &got[0], ds, &src[0], ss)
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("copyRuns32 w=%d n=%d strides %d, %d: element %d is %x, want %x",
					w, n, ds, ss, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
			// Which NaN a sum of two NaNs returns depends on the
			// operand order each compiled loop happens to take:
			// TestPatchPasses32MatchGoLoops checks col2im's own; here
			// the sources are NaN-free.
			for i, v := range src {
				if v != v {
					src[i] = 1
				}
			}
			want, got = append(want[:0], dst...), append(got[:0], dst...)
			for i := range n {
				d := want[i*ds : i*ds+w]
				for k, v := range src[i*ss : i*ss+w] {
					d[k] += v
				}
			}
			addRuns32(n, w, &got[0], ds, &src[0], ss)
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("addRuns32 w=%d n=%d strides %d, %d: element %d is %x, want %x",
					w, n, ds, ss, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}

// patchRows32 writes im2rowDense's Go rows for 3- and 5-wide runs, any
// number of runs and positions, and leaves the rest of each row of the
// leading dimension, and what follows the last row, alone.
func TestPatchRows32MatchesGoLoop(t *testing.T) {
	needAVX(t)
	r := rand.New(rand.NewPCG(4, 1))
	for _, kw := range []int{3, 5} {
		for nr := 1; nr <= 7; nr++ {
			for nox := 1; nox <= 5; nox++ {
				runs := make([]int, nr)
				for i := 1; i < nr; i++ {
					runs[i] = runs[i-1] + kw + r.IntN(4)
				}
				ld := nr*kw + r.IntN(4)
				src := special32(r, nox-1+runs[nr-1]+kw)
				// Eight values past the last row: a move past a row's
				// end would show there or in the gaps up to ld.
				dst := special32(r, (nox-1)*ld+nr*kw+8)
				want, got := append([]float32(nil), dst...), append([]float32(nil), dst...)
				for t := range nox {
					for i, o := range runs {
						copy(want[t*ld+kw*i:t*ld+kw*i+kw], src[t+o:t+o+kw])
					}
				}
				patchRows32(kw, nox, nr, &got[0], ld, &src[0], &runs[0])
				if i := sameBits32(got, want); i >= 0 {
					t.Fatalf("kw=%d nr=%d nox=%d ld=%d: element %d is %x, want %x",
						kw, nr, nox, ld, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
}

// A float32 net gives the same bits with its AVX kernels as with the Go
// loops alone (HGPSIM_NOAVX2=1): loss, gradient, Hessian-vector product
// and input gradients, on nets whose convolutions take each patch path
// (3-, 4- and 5-wide kernels, patch rows and columns, strides, padding).
func TestFloat32KernelsMatchGoLoops(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	const n, classes = 5, 7
	for _, c := range []struct {
		name  string
		in    Shape
		specs []Spec
	}{
		{"lenet", Shape{3, 32, 32}, nil},
		{"3x3 rows, 4x4, pools", Shape{16, 14, 14}, []Spec{
			Conv2D(16, 3, 1, 0), ReLU(), Conv2D(8, 4, 1, 0), ReLU(), MaxPool2D(2, 2),
			Conv2D(8, 3, 2, 1), AvgPool2D(2, 2), Flatten(), Dense(classes)}},
		{"5x5 rows on 16 channels", Shape{16, 12, 12}, []Spec{
			Conv2D(8, 5, 1, 0), ReLU(), MaxPool2D(2, 2), Flatten(), Dense(classes)}},
	} {
		specs := c.specs
		if specs == nil {
			var err error
			if specs, err = Preset(c.name, c.in, classes); err != nil {
				t.Fatal(err)
			}
		}
		net, err := New[float32](c.in, specs, classes)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := rand.New(rand.NewPCG(5, 2))
		x := make([]float32, net.Dim())
		net.Init(x, r)
		u := to32(randVec(r, net.Dim(), 0.1))
		a := to32(randVec(r, n*c.in.Size(), 1))
		g, rg := to32(randVec(r, n*classes, 1)), to32(randVec(r, n*classes, 1))
		labels := make([]int, n)
		for i := range labels {
			labels[i] = r.IntN(classes)
		}
		run := func(vector bool) [][]float32 {
			patchVector = vector
			grad, hvp := make([]float32, net.Dim()), make([]float32, net.Dim())
			loss := net.Grad(grad, x, a, labels, 1e-3)
			net.HVP(hvp, x, a, labels, 1e-3, u)
			z, v := make([]float32, n*classes), make([]float32, n*classes)
			gw, ga, rga := make([]float32, net.Dim()), make([]float32, len(a)), make([]float32, len(a))
			net.Logits(z, x, a, n)
			net.JVP(v, x, u)
			net.VJPInput(gw, ga, x, g)
			net.VJPRInput(gw, rga, x, u, g, rg)
			return [][]float32{{float32(loss)}, grad, hvp, z, v, gw, ga, rga}
		}
		want, got := run(false), run(true)
		for k, name := range []string{"loss", "gradient", "HVP", "logits", "JVP", "VJP+VJPR", "input gradient", "its derivative"} {
			if i := sameBits32(got[k], want[k]); i >= 0 {
				t.Errorf("%s: %s element %d is %x with the AVX kernels, %x without", c.name, name, i,
					math.Float32bits(got[k][i]), math.Float32bits(want[k][i]))
			}
		}
	}
}

// A convolution's patch passes (im2row, im2col, col2im) give the same bits
// with the AVX kernels as with the Go loops, on data a third NaNs of
// distinct payloads (col2im's additions then show their operand order).
func TestPatchPasses32MatchGoLoops(t *testing.T) {
	needAVX(t)
	defer func(v bool) { patchVector = v }(patchVector)
	r := rand.New(rand.NewPCG(9, 1))
	const m = 3
	for _, c := range []struct {
		in Shape
		sp Spec
	}{
		{Shape{2, 9, 11}, Conv2D(4, 3, 1, 0)},
		{Shape{3, 12, 10}, Conv2D(4, 5, 1, 0)},
		{Shape{2, 8, 9}, Conv2D(4, 4, 1, 0)},
		{Shape{2, 9, 9}, Conv2D(4, 3, 2, 1)},
	} {
		l, err := newConv[float32](c.sp, c.in)
		if err != nil {
			t.Fatal(err)
		}
		cv := l.(*conv[float32])
		x := nans32(r, m*c.in.Size())
		gcol := nans32(r, cv.k*m*cv.p)
		ld := cv.k + 3
		rowsInit := nans32(r, m*cv.p*ld)
		var outs [2][3][]float32
		for k, vector := range []bool{false, true} {
			patchVector = vector
			rows := append([]float32(nil), rowsInit...)
			cv.im2row(rows, ld, 2, x, m)
			col := make([]float32, cv.k*m*cv.p)
			cv.im2col(col, x, m)
			gx := make([]float32, m*c.in.Size())
			cv.col2im(gx, gcol, m*cv.p, m)
			outs[k] = [3][]float32{rows, col, gx}
		}
		for k, name := range []string{"im2row", "im2col", "col2im"} {
			if i := sameBits32(outs[1][k], outs[0][k]); i >= 0 {
				t.Errorf("%v %s: element %d is %x with the kernels, %x without", c.in, name, i,
					math.Float32bits(outs[1][k][i]), math.Float32bits(outs[0][k][i]))
			}
		}
	}
}
