package vec

// combineAVX2 is Combine without its checks: 32, then 4, then 1
// coordinates at a time, each group's sums held in registers over all the
// terms.
//
//go:noescape
func combineAVX2(dst []float64, terms []Term[float64], off int)

// combineAVX512 is combineAVX2 on 512-bit registers: 64, then 8, then 1
// coordinates at a time, with combineAVX2's operations in its order, lane
// by lane.
//
//go:noescape
func combineAVX512(dst []float64, terms []Term[float64], off int)

// combine32AVX2 is combineAVX2 in float32: 64, then 8, then 1 coordinates
// at a time.
//
//go:noescape
func combine32AVX2(dst []float32, terms []Term[float32], off int)

// combine32AVX512 is combine32AVX2 on 512-bit registers: 128, then 16,
// then 1 coordinates at a time.
//
//go:noescape
func combine32AVX512(dst []float32, terms []Term[float32], off int)

func combine(dst []float64, terms []Term[float64], off int) {
	if hasAVX512 {
		combineAVX512(dst, terms, off)
		return
	}
	if hasAVX2 {
		combineAVX2(dst, terms, off)
		return
	}
	combineGo(dst, terms, off)
}

func combine32(dst []float32, terms []Term[float32], off int) {
	if hasAVX512 {
		combine32AVX512(dst, terms, off)
		return
	}
	if hasAVX2 {
		combine32AVX2(dst, terms, off)
		return
	}
	combineGo(dst, terms, off)
}
