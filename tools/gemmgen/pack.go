package main

import "fmt"

// packNT writes packNT{w}, which packs w rows of Bᵀ (k-contiguous, one
// leading dimension apart) into a sliver of B: element (p, t) at d[p·w+t].
// It transposes 4 × 4 blocks in registers (two unpacks and a lane swap),
// where the Go loop moves one element per load and store.
func packNT(p func(string, ...any), w int) {
	name := fmt.Sprintf("packNT%d", w)
	p("")
	p("// func %s(n4 int, b *float64, ldb int, d *float64)", name)
	p("//")
	p("// Packs columns 0 … 4·n4−1 of rows 0–%d of b. Requires AVX, n4 ≥ 1.", w-1)
	p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	p("\tMOVQ n4+0(FP), CX")
	p("\tMOVQ b+8(FP), SI")
	p("\tMOVQ ldb+16(FP), R8")
	p("\tSHLQ $3, R8")
	p("\tMOVQ d+24(FP), DI")
	// Row t is at bases[t/3] + (t%3)·ldb.
	bases := []string{"SI", "R9", "R10", "R11", "R12", "R13"}[:(w+2)/3]
	for q := 1; q < len(bases); q++ {
		p("\tLEAQ (%s)(R8*2), %s", bases[q-1], bases[q])
		p("\tADDQ R8, %s", bases[q])
	}
	row := func(t int) string {
		base := bases[t/3]
		switch t % 3 {
		case 0:
			return fmt.Sprintf("(%s)", base)
		case 1:
			return fmt.Sprintf("(%s)(R8*1)", base)
		default:
			return fmt.Sprintf("(%s)(R8*2)", base)
		}
	}
	p("%s_loop:", name)
	for h := range w / 4 {
		for t := range 4 {
			p("\tVMOVUPD %s, Y%d", row(4*h+t), t)
		}
		p("\tVUNPCKLPD Y1, Y0, Y4") // r0[0] r1[0] r0[2] r1[2]
		p("\tVUNPCKHPD Y1, Y0, Y5") // r0[1] r1[1] r0[3] r1[3]
		p("\tVUNPCKLPD Y3, Y2, Y6")
		p("\tVUNPCKHPD Y3, Y2, Y7")
		p("\tVPERM2F128 $0x20, Y6, Y4, Y0")
		p("\tVPERM2F128 $0x20, Y7, Y5, Y1")
		p("\tVPERM2F128 $0x31, Y6, Y4, Y2")
		p("\tVPERM2F128 $0x31, Y7, Y5, Y3")
		for c := range 4 {
			p("\tVMOVUPD Y%d, %d(DI)", c, 8*w*c+32*h)
		}
	}
	for _, b := range bases {
		p("\tADDQ $32, %s", b)
	}
	p("\tADDQ $%d, DI", 32*w)
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("\tVZEROUPPER")
	p("\tRET")
}

// packRows writes packRows{w}, which copies the first w elements of n rows
// one leading dimension apart into consecutive rows of w: a k panel of B
// into a sliver of 16 or eight columns, or a sliver of Aᵀ into six rows. Go's
// copy would call memmove for each 48 or 64 bytes.
func packRows(p func(string, ...any), w int) {
	name := fmt.Sprintf("packRows%d", w)
	p("")
	p("// func %s(n int, src *float64, lds int, dst *float64)", name)
	p("//")
	p("// Requires AVX, n ≥ 1.")
	p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	p("\tMOVQ n+0(FP), CX")
	p("\tMOVQ src+8(FP), SI")
	p("\tMOVQ lds+16(FP), R8")
	p("\tSHLQ $3, R8")
	p("\tMOVQ dst+24(FP), DI")
	p("%s_loop:", name)
	for q := 0; q < w; q += 4 {
		r := "Y"
		if w-q == 2 {
			r = "X"
		}
		p("\tVMOVUPD %d(SI), %s%d", 8*q, r, q/4)
	}
	for q := 0; q < w; q += 4 {
		r := "Y"
		if w-q == 2 {
			r = "X"
		}
		p("\tVMOVUPD %s%d, %d(DI)", r, q/4, 8*q)
	}
	p("\tADDQ R8, SI")
	p("\tADDQ $%d, DI", 8*w)
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("\tVZEROUPPER")
	p("\tRET")
}
