package vec

// combineAVX2 is Combine without its checks: 32, then 4, then 1
// coordinates at a time, each group's sums held in registers over all the
// terms.
//
//go:noescape
func combineAVX2(dst []float64, terms []Term, off int)

// combineAVX512 is combineAVX2 on 512-bit registers: 64, then 8, then 1
// coordinates at a time, with combineAVX2's operations in its order, lane
// by lane.
//
//go:noescape
func combineAVX512(dst []float64, terms []Term, off int)

func combine(dst []float64, terms []Term, off int) {
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
