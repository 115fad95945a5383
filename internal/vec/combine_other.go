//go:build !amd64

package vec

// hasAVX2 is the amd64 kernels' switch; elsewhere there are none, and the
// tests that compare the kernels with the pure-Go ones compare those alone.
var hasAVX2, hasAVX512 = false, false

func combine(dst []float64, terms []Term[float64], off int) { combineGo(dst, terms, off) }

func combine32(dst []float32, terms []Term[float32], off int) { combineGo(dst, terms, off) }
