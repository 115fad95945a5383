package main

import (
	"fmt"
	"strings"
)

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

// packNT32 writes spackNT{w}, packNT for float32: w rows (a multiple of
// eight) of Bᵀ into a sliver, transposing 8 × 8 blocks in registers (two
// rounds of unpacks and shuffles, then a lane swap). The rows are taken
// eight at a time, each group over all of n8 blocks of eight columns.
func packNT32(p func(string, ...any), w int) {
	name := f32.name("packNT%d", w)
	p("")
	p("// func %s(n8 int, b *float32, ldb int, d *float32)", name)
	p("//")
	p("// Packs columns 0 … 8·n8−1 of rows 0–%d of b. Requires AVX, n8 ≥ 1.", w-1)
	p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	p("\tMOVQ ldb+16(FP), R8")
	p("\tSHLQ $2, R8")
	for h := range w / 8 {
		// Rows 8h … 8h+7 start at SI, R9 (three rows on) and R10 (six).
		p("\tMOVQ n8+0(FP), CX")
		p("\tMOVQ b+8(FP), SI")
		p("\tMOVQ d+24(FP), DI")
		for range h {
			p("\tLEAQ (SI)(R8*8), SI")
		}
		p("\tLEAQ (SI)(R8*2), R9")
		p("\tADDQ R8, R9")
		p("\tLEAQ (R9)(R8*2), R10")
		p("\tADDQ R8, R10")
		p("%s_loop%d:", name, h)
		for t := range 8 {
			p("\tVMOVUPS %s, Y%d", rowAddr8(0, t, [3]string{"SI", "R9", "R10"}, "R8"), t)
		}
		for t := 0; t < 8; t += 2 {
			p("\tVUNPCKLPS Y%d, Y%d, Y%d", t+1, t, 8+t) // r_t[0] r_t+1[0] r_t[1] r_t+1[1] in each half
			p("\tVUNPCKHPS Y%d, Y%d, Y%d", t+1, t, 9+t) // … [2], [3]
		}
		for t := 0; t < 8; t += 4 {
			p("\tVSHUFPS $0x44, Y%d, Y%d, Y%d", 10+t, 8+t, t) // column 0 (4) of four rows
			p("\tVSHUFPS $0xEE, Y%d, Y%d, Y%d", 10+t, 8+t, t+1)
			p("\tVSHUFPS $0x44, Y%d, Y%d, Y%d", 11+t, 9+t, t+2)
			p("\tVSHUFPS $0xEE, Y%d, Y%d, Y%d", 11+t, 9+t, t+3)
		}
		for c := range 4 {
			p("\tVPERM2F128 $0x20, Y%d, Y%d, Y%d", 4+c, c, 8+c)
			p("\tVPERM2F128 $0x31, Y%d, Y%d, Y%d", 4+c, c, 12+c)
		}
		for c := range 8 {
			p("\tVMOVUPS Y%d, %d(DI)", 8+c, 4*w*c+32*h)
		}
		for _, b := range []string{"SI", "R9", "R10"} {
			p("\tADDQ $32, %s", b)
		}
		p("\tADDQ $%d, DI", 32*w)
		p("\tDECQ CX")
		p("\tJNZ %s_loop%d", name, h)
	}
	p("\tVZEROUPPER")
	p("\tRET")
}

// packRows writes packRows{w}, which copies the first w elements of n rows
// one leading dimension apart into consecutive rows of w: a k panel of B
// into a sliver of the kernels' tile width, or a sliver of Aᵀ into six
// rows. Go's copy would call memmove for each 24 to 128 bytes.
func packRows(p func(string, ...any), e elem, w int) {
	name := e.name("packRows%d", w)
	p("")
	p("// func %s(n int, src *%[2]s, lds int, dst *%[2]s)", name, e.goType)
	p("//")
	p("// Requires AVX, n ≥ 1.")
	p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	p("\tMOVQ n+0(FP), CX")
	p("\tMOVQ src+8(FP), SI")
	p("\tMOVQ lds+16(FP), R8")
	p("\tSHLQ $%d, R8", e.shift)
	p("\tMOVQ dst+24(FP), DI")
	p("%s_loop:", name)
	// Chunks of 32, 16 and 8 bytes (rows are 24 to 128 bytes long).
	type chunk struct {
		off int
		mov string
	}
	var chunks []chunk
	for off, n := 0, w*e.size; off < n; {
		switch {
		case n-off >= 32:
			chunks = append(chunks, chunk{off, "VMOVU" + e.pk + " %s, Y%d"})
			off += 32
		case n-off >= 16:
			chunks = append(chunks, chunk{off, "VMOVU" + e.pk + " %s, X%d"})
			off += 16
		default:
			chunks = append(chunks, chunk{off, "VMOVSD %s, X%d"})
			off += 8
		}
	}
	for i, ch := range chunks {
		p("\t"+ch.mov, fmt.Sprintf("%d(SI)", ch.off), i)
	}
	for i, ch := range chunks {
		mnem, _, _ := strings.Cut(ch.mov, " ")
		reg := ch.mov[len(ch.mov)-3 : len(ch.mov)-2]
		p("\t%s %s%d, %d(DI)", mnem, reg, i, ch.off)
	}
	p("\tADDQ R8, SI")
	p("\tADDQ $%d, DI", e.size*w)
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("\tVZEROUPPER")
	p("\tRET")
}

// packBlock writes packBlock{mb}: packRows6 for a whole block of mb rows
// of Aᵀ (mb a multiple of 6) in one walk over p. Each p's mb contiguous
// values are read once and stored into the block's mb/6 slivers (sliver s
// at dst + 6·s·kb elements, element (p, r) at p·6 + r), where packRows6
// walks all kb rows once per sliver: with rows 4 or 8 kB apart (a wide
// layer's weights), each of those walks fetched the same cache lines from
// L3 again, the rows mapping to a few sets of L1 and L2.
func packBlock(p func(string, ...any), e elem, mb int) {
	name := e.name("packBlock%d", mb)
	w := 6 * e.size // bytes of a sliver's row
	p("")
	p("// func %s(kb int, src *%[2]s, lds int, dst *%[2]s)", name, e.goType)
	p("//")
	p("// Requires AVX, kb ≥ 1.")
	p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	p("\tMOVQ kb+0(FP), CX")
	p("\tMOVQ src+8(FP), SI")
	p("\tMOVQ lds+16(FP), R8")
	p("\tSHLQ $%d, R8", e.shift)
	p("\tMOVQ dst+24(FP), DI")
	p("\tMOVQ CX, R9")
	p("\tIMULQ $%d, R9", w) // a sliver's bytes: 6·kb elements
	p("%s_loop:", name)
	p("\tMOVQ DI, R10")
	for s := range mb / 6 {
		off := s * w
		if e.size == 8 {
			p("\tVMOVUPD %d(SI), Y0", off)
			p("\tVMOVUPD %d(SI), X1", off+32)
			p("\tVMOVUPD Y0, (R10)")
			p("\tVMOVUPD X1, 32(R10)")
		} else {
			p("\tVMOVUPS %d(SI), X0", off)
			p("\tVMOVSD %d(SI), X1", off+16)
			p("\tVMOVUPS X0, (R10)")
			p("\tVMOVSD X1, 16(R10)")
		}
		if s < mb/6-1 {
			p("\tADDQ R9, R10")
		}
	}
	p("\tADDQ R8, SI")
	p("\tADDQ $%d, DI", w)
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("\tVZEROUPPER")
	p("\tRET")
}
