package vec

import "fmt"

// Term is one Coef·Vec of a linear combination (see Combine).
type Term struct {
	Coef float64
	Vec  []float64 // never overlaps the destination it is combined into
}

// Combine sets dst[i] = Σ_t terms[t].Coef·terms[t].Vec[off+i] for every
// i < len(dst): the linear combination of coordinates [off, off+len(dst))
// of the terms' vectors, as mixing in push-sum and HGP needs it.
//
// Order contract: each coordinate is summed exactly as
//
//	clear(dst)
//	for _, t := range terms {
//		AddScaled(dst, t.Coef, t.Vec[off:off+len(dst)])
//	}
//
// sums it — from +0, the terms in their order, each term one rounded
// product Coef·Vec[off+i] and one rounded sum, never a fused multiply-add —
// so the two give the same bits: no terms give +0, and a sum whose every
// product is −0 is +0. Only the memory traffic differs: on amd64 with AVX2
// it holds 32 coordinates of dst in registers while it walks all the
// terms, so each term costs one load per coordinate, where that loop loads
// and stores dst once per term.
//
// It panics when off < 0 or a term's Vec is shorter than off+len(dst). No
// Vec may overlap dst.
func Combine(dst []float64, terms []Term, off int) {
	if off < 0 {
		panic(fmt.Sprintf("vec: Combine at offset %d", off))
	}
	end := off + len(dst)
	for k := range terms {
		if len(terms[k].Vec) < end {
			panic(fmt.Sprintf("vec: Combine of %d coordinates from %d but term %d has %d", len(dst), off, k, len(terms[k].Vec)))
		}
	}
	combine(dst, terms, off)
}

// combineGo is Combine in Go, four coordinates at a time. The explicit
// float64 conversions round each product on its own: without them the
// compiler may fuse the product and the sum on architectures with FMA.
func combineGo(dst []float64, terms []Term, off int) {
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		var s0, s1, s2, s3 float64
		for k := range terms {
			c, v := terms[k].Coef, terms[k].Vec[off+i:off+i+4]
			s0 += float64(c * v[0])
			s1 += float64(c * v[1])
			s2 += float64(c * v[2])
			s3 += float64(c * v[3])
		}
		dst[i], dst[i+1], dst[i+2], dst[i+3] = s0, s1, s2, s3
	}
	for ; i < len(dst); i++ {
		var s float64
		for k := range terms {
			s += float64(terms[k].Coef * terms[k].Vec[off+i])
		}
		dst[i] = s
	}
}
