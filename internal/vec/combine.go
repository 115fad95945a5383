package vec

import (
	"fmt"
	"unsafe"
)

// Term is one Coef·Vec of a linear combination (see Combine). A caller
// holding a float64 coefficient (a push weight) for a float32 vector
// converts it once, Coef = F(weight): the kernel multiplies in F.
type Term[F Float] struct {
	Coef F
	Vec  []F // never overlaps the destination it is combined into
}

// Combine sets dst[i] = Σ_t terms[t].Coef·terms[t].Vec[off+i] for every
// i < len(dst): the linear combination of coordinates [off, off+len(dst))
// of the terms' vectors, as mixing in push-sum and HGP needs it.
//
// Order contract, in float64 and float32 alike: each coordinate is summed
// exactly as
//
//	clear(dst)
//	for _, t := range terms {
//		AddScaled(dst, t.Coef, t.Vec[off:off+len(dst)])
//	}
//
// sums it — from +0, the terms in their order, each term one product
// Coef·Vec[off+i] rounded to F and one sum rounded to F, never a fused
// multiply-add — so the two give the same bits: no terms give +0, and a
// sum whose every product is −0 is +0. Only the memory traffic differs: on
// amd64 with AVX2 it holds 256 bytes of dst in registers (32 float64 or 64
// float32 coordinates) while it walks all the terms, so each term costs
// one load per coordinate, where that loop loads and stores dst once per
// term.
//
// It panics when off < 0 or a term's Vec is shorter than off+len(dst). No
// Vec may overlap dst.
func Combine[F Float](dst []F, terms []Term[F], off int) {
	if Is64[F]() {
		d, t := View[float64](dst), resliceTerms[float64](terms)
		checkTerms(len(d), t, off)
		combine(d, t, off)
		return
	}
	d, t := View[float32](dst), resliceTerms[float32](terms)
	checkTerms(len(d), t, off)
	combine32(d, t, off)
}

// checkTerms panics unless off ≥ 0 and every term holds coordinates
// [off, off+n). It runs on the terms as the kernels take them, one
// instantiation per element type: checked through Combine's F it cost
// float64 mixing a tenth more on short blocks.
func checkTerms[F Float](n int, terms []Term[F], off int) {
	if off < 0 {
		panic(fmt.Sprintf("vec: Combine at offset %d", off))
	}
	for k := range terms {
		if len(terms[k].Vec) < off+n {
			panic(fmt.Sprintf("vec: Combine of %d coordinates from %d but term %d has %d", n, off, k, len(terms[k].Vec)))
		}
	}
}

// resliceTerms views terms as Terms of T, which must be F itself.
func resliceTerms[T, F Float](terms []Term[F]) []Term[T] {
	return unsafe.Slice((*Term[T])(unsafe.Pointer(unsafe.SliceData(terms))), len(terms))
}

// combineGo is Combine in Go, four coordinates at a time. The explicit
// conversions to F round each product on its own: without them the
// compiler may fuse the product and the sum on architectures with FMA.
func combineGo[F Float](dst []F, terms []Term[F], off int) {
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		var s0, s1, s2, s3 F
		for k := range terms {
			c, v := terms[k].Coef, terms[k].Vec[off+i:off+i+4]
			s0 += F(c * v[0])
			s1 += F(c * v[1])
			s2 += F(c * v[2])
			s3 += F(c * v[3])
		}
		dst[i], dst[i+1], dst[i+2], dst[i+3] = s0, s1, s2, s3
	}
	for ; i < len(dst); i++ {
		var s F
		for k := range terms {
			s += F(terms[k].Coef * terms[k].Vec[off+i])
		}
		dst[i] = s
	}
}
