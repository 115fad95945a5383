//go:build !amd64

package vec

func combine(dst []float64, terms []Term, off int) { combineGo(dst, terms, off) }
