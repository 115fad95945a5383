package vec

// combineAVX2 is Combine without its checks: 32, then 4, then 1
// coordinates at a time, each group's sums held in registers over all the
// terms.
//
//go:noescape
func combineAVX2(dst []float64, terms []Term, off int)

func combine(dst []float64, terms []Term, off int) {
	if hasAVX2 {
		combineAVX2(dst, terms, off)
		return
	}
	combineGo(dst, terms, off)
}
