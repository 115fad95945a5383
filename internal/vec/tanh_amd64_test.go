package vec

import (
	"math"
	"testing"

	"golang.org/x/sys/cpu"
)

// tanhImpls is Tanh and each kernel this CPU can run, called directly.
func tanhImpls() []tanhImpl {
	ims := []tanhImpl{{"Tanh", Tanh}}
	if !mathExpFused() || !cpu.X86.HasAVX || !cpu.X86.HasFMA {
		return ims // the kernels compute math.Exp's FMA branch only
	}
	if cpu.X86.HasAVX2 {
		ims = append(ims, tanhImpl{"tanhAVX2", func(dst, src []float64) {
			n := len(src) &^ 3
			tanhAVX2(dst, src, tanhConsts)
			tanhGo(dst[n:], src[n:])
		}})
	}
	if hasAVX512 {
		ims = append(ims, tanhImpl{"tanhAVX512", func(dst, src []float64) { tanhAVX512(dst, src, tanhConsts) }})
	}
	return ims
}

// mathExpFused reports whether math.Tanh follows the model of math.Exp's
// FMA branch on the first probe (TestTanhProbesSplit checks the rest).
func mathExpFused() bool {
	x := tanhProbes[0]
	return math.Float64bits(math.Tanh(x)) == math.Float64bits(tanhModel(x, true))
}

// TestTanhUsesKernel checks that the start-up probes pass wherever the
// kernels' conditions hold, so that the fast path is not lost silently.
func TestTanhUsesKernel(t *testing.T) {
	want := hasAVX2 && cpu.X86.HasAVX && cpu.X86.HasFMA && mathExpFused()
	if useTanhAVX2 != want {
		t.Errorf("AVX2 kernel in use: %v, want %v", useTanhAVX2, want)
	}
	if useTanhAVX512 != (want && hasAVX512) {
		t.Errorf("AVX-512 kernel in use: %v, want %v", useTanhAVX512, want && hasAVX512)
	}
	t.Logf("kernel %s", tanhKernel())
}

// expModel is math.Exp's amd64 assembly for arguments in [1.25, 88.03]
// (finite, no overflow, no subnormal result), in its FMA branch (fused) or
// its plain one; explicit float64 conversions keep the compiler from
// fusing what the plain branch rounds twice.
func expModel(x float64, fused bool) float64 {
	k := math.RoundToEven(float64(x * expLog2e))
	var r float64
	if fused {
		r = math.FMA(-k, expLn2L, math.FMA(-k, expLn2U, x))
	} else {
		r = x - float64(k*expLn2U)
		r -= float64(k * expLn2L)
	}
	r *= 0.0625
	p := expC8
	for _, c := range [...]float64{expC7, expC6, expC5, expC4, expC3, 0.5, 1} {
		if fused {
			p = math.FMA(p, r, c)
		} else {
			p = float64(p*r) + c
		}
	}
	y := r * p
	for range 3 {
		y *= y + 2
	}
	if fused {
		y = math.FMA(y+2, y, 1)
	} else {
		y = float64(y*(y+2)) + 1
	}
	return math.Ldexp(y, int(k))
}

// tanhModel is math.Tanh with expModel for math.Exp.
func tanhModel(x float64, fused bool) float64 {
	z := math.Abs(x)
	switch {
	case z > 0.5*tanhMaxLog:
		return math.Copysign(1, x)
	case z >= tanhCut:
		t := 1 - 2/(expModel(2*z, fused)+1)
		if x < 0 {
			t = -t
		}
		return t
	case x == 0:
		return x
	}
	s := x * x
	num := float64(float64(float64(float64(tanhP0*s)+tanhP1)*s)+tanhP2) * float64(x*s)
	den := float64(float64(float64(float64(s+tanhQ0)*s)+tanhQ1)*s) + tanhQ2
	return x + num/den
}

// TestTanhProbesSplit checks that the kernels' start-up probes can tell
// math.Exp's two branches apart — each of the first values has a different
// tanh under each — and that math.Tanh here is the model of one of them.
func TestTanhProbesSplit(t *testing.T) {
	fused := 0
	for _, x := range tanhProbes[:tanhSplitProbes] {
		a, b := tanhModel(x, true), tanhModel(x, false)
		if a == b {
			t.Errorf("probe %v: both branches give %v", x, a)
		}
		switch math.Float64bits(math.Tanh(x)) {
		case math.Float64bits(a):
			fused++
		case math.Float64bits(b):
		default:
			t.Errorf("probe %v: math.Tanh gives %v, the models %v (fused) and %v", x, math.Tanh(x), a, b)
		}
	}
	if fused != 0 && fused != tanhSplitProbes {
		t.Errorf("math.Tanh follows the fused model on %d of %d probes", fused, tanhSplitProbes)
	}
	t.Logf("math.Exp's FMA branch: %v; kernel %s", fused > 0, tanhKernel())
}
