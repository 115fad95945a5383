package vec

import (
	"math"

	"golang.org/x/sys/cpu"
)

// The constants of math.Tanh (Cephes: the cut between its rational and its
// exponential form, the saturation point ½·log 2¹²⁷, the rational
// function's coefficients) and of the amd64 assembly of math.Exp (SLEEF:
// log₂e, ln 2 in two parts, the Taylor coefficients of the reduced
// argument), written as there so that they round to the same doubles.
const (
	tanhCut    = 0.625
	tanhMaxLog = 8.8029691931113054295988e+01
	tanhP0     = -9.64399179425052238628e-1
	tanhP1     = -9.92877231001918586564e1
	tanhP2     = -1.61468768441708447952e3
	tanhQ0     = 1.12811678491632931402e2
	tanhQ1     = 2.23548839060100448583e3
	tanhQ2     = 4.84406305325125486048e3
	expLog2e   = 1.4426950408889634073599246810018920
	expLn2U    = 0.69314718055966295651160180568695068359375
	expLn2L    = 0.28235290563031577122588448175013436025525412068e-12
	expC3      = 1.6666666666666666667e-1
	expC4      = 4.1666666666666666667e-2
	expC5      = 8.3333333333333333333e-3
	expC6      = 1.3888888888888888889e-3
	expC7      = 1.9841269841269841270e-4
	expC8      = 2.4801587301587301587e-5
)

// tanhTable is the kernels' constants, each repeated over four lanes (one
// YMM operand); the offsets in tanh_amd64.s follow this order.
type tanhTable [24][4]float64

var tanhConsts = func() *tanhTable {
	words := [...]float64{
		math.Float64frombits(1<<63 - 1), // |x| mask
		math.Float64frombits(1 << 63),   // sign mask
		0.5 * tanhMaxLog,
		tanhCut,
		tanhP0, tanhP1, tanhP2,
		tanhQ0, tanhQ1, tanhQ2,
		expLog2e, expLn2U, expLn2L,
		0.0625,
		expC8, expC7, expC6, expC5, expC4, expC3,
		0.5, 1, 2,
		math.Float64frombits(0x3ff<<32 | 0x3ff), // the exponent bias as two int32s
	}
	var t tanhTable
	for i, w := range words {
		t[i] = [4]float64{w, w, w, w}
	}
	return &t
}()

// tanhAVX2 sets dst[i] = math.Tanh(src[i]) for i < len(src) rounded down
// to a multiple of four.
//
//go:noescape
func tanhAVX2(dst, src []float64, k *tanhTable)

// tanhAVX512 is tanhAVX2 on eight lanes, the last group masked, so that it
// covers all of src.
//
//go:noescape
func tanhAVX512(dst, src []float64, k *tanhTable)

// useTanhAVX2 is the condition under which math.Exp takes its FMA branch on
// amd64 (AVX and FMA), which the kernels replicate, with AVX2 on top for
// their integer lanes. Go's GODEBUG=cpu.… settings can switch math's FMA
// branch off where x/sys/cpu still reports FMA, so the kernel must also
// reproduce math.Tanh on probe values whose bits tell the two branches
// apart.
var useTanhAVX2 = hasAVX2 && cpu.X86.HasAVX && cpu.X86.HasFMA && tanhProbe(tanhAVX2)

// useTanhAVX512 adds the 512-bit kernels' condition (vec.HasAVX512).
var useTanhAVX512 = useTanhAVX2 && hasAVX512 && tanhProbe(tanhAVX512)

// tanhProbes are inputs whose math.Tanh differs in the last bit between
// math.Exp's FMA branch and its plain one (found by TestTanhProbesSplit),
// followed by one input in each of math.Tanh's cases.
var tanhProbes = [...]float64{
	1.601343251606342, 0.7595479338849946, 1.8903781565038866, 0.772199960026107,
	-0.8859279500156569, -2.4164259064994686, 1.1070475757671603, 0.6328828783055622,
	0.3, -0.3, math.Copysign(0, -1), 50, math.Inf(-1), math.NaN(), 1e-310, -2.5,
}

// tanhSplitProbes is the number of leading tanhProbes that tell math.Exp's
// branches apart.
const tanhSplitProbes = 8

func tanhProbe(kernel func(dst, src []float64, k *tanhTable)) bool {
	var got [len(tanhProbes)]float64
	kernel(got[:], tanhProbes[:], tanhConsts)
	for i, x := range tanhProbes {
		if math.Float64bits(got[i]) != math.Float64bits(math.Tanh(x)) {
			return false
		}
	}
	return true
}

func tanh(dst, src []float64) {
	if useTanhAVX512 {
		tanhAVX512(dst, src, tanhConsts)
		return
	}
	n := 0
	if useTanhAVX2 {
		n = len(src) &^ 3
		tanhAVX2(dst, src, tanhConsts)
	}
	tanhGo(dst[n:], src[n:])
}

// tanhKernel names the kernel Tanh uses, for the tests' logs.
func tanhKernel() string {
	switch {
	case useTanhAVX512:
		return "AVX-512"
	case useTanhAVX2:
		return "AVX2"
	}
	return "math.Tanh"
}
