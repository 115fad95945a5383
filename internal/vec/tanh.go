package vec

import (
	"fmt"
	"math"
)

// Tanh sets dst[i] = math.Tanh(src[i]) for every i, bit for bit. On amd64
// with AVX2 and FMA it evaluates four (or eight) values at a time, lane by
// lane with exactly the operations math.Tanh performs there; elsewhere, or
// when HGPSIM_NOAVX2=1 is set, it calls math.Tanh. It panics when the
// lengths differ. dst and src may be the same slice.
func Tanh(dst, src []float64) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("vec: Tanh of lengths %d and %d", len(dst), len(src)))
	}
	tanh(dst, src)
}

// tanhGo is Tanh one value at a time: the reference, the fallback and the
// tail of the vector kernels.
func tanhGo(dst, src []float64) {
	for i, v := range src {
		dst[i] = math.Tanh(v)
	}
}
