package main

import "fmt"

// acc writes accKern{mr}x{nr}: C[r][j] += Σ_p A(r, p)·B[p][j] for r < mr,
// j < nr over kc values of p, each product added by a fused multiply-add
// (chain order), for nj tiles side by side: tile t reads B from b + t·bstep and
// writes C from c + t·nr. A(r, p) sits at a + r·rs + p·ks, so one kernel
// serves A, Aᵀ and a packed sliver; looping over the tiles here rather
// than in Go spares a call per tile, which counts when k is small.
//
// With masked set, the kernel is accKern{mr}xm: a tile of fewer columns
// than a YMM register has lanes (one to three float64, one to seven
// float32), those whose lane of *mask has its sign bit set. VMASKMOV loads
// and stores only those lanes (the others read as zero and are never
// written, nor does the load fault past the end of B or C), so odd widths
// run as vectors where they would otherwise be scalar chains. The float32
// kernels (e = f32) are named with a leading s.
func acc(p func(string, ...any), e elem, mr, nr int, masked bool) {
	L := e.lanes()
	nv := nr / L
	name := e.name("accKern%dx%d", mr, nr)
	args, frame := "", 80
	if masked {
		name = e.name("accKern%dxm", mr)
		args, frame = fmt.Sprintf(", mask *[%d]int%d", L, 8*e.size), 88
	}
	load := func(src string, dst int) {
		if masked {
			p("\tVMASKMOV%s %s, Y13, Y%d", e.pk, src, dst)
		} else {
			p("\tVMOVU%s %s, Y%d", e.pk, src, dst)
		}
	}
	p("")
	p("// func %s(nj, kc int, a *%[2]s, rs, ks int, b *%[2]s, ldb, bstep int, c *%[2]s, ldc int%s)", name, e.goType, args)
	p("//")
	p("// Y(r·%d+v) accumulates columns %dv..%dv+%d of row r of a tile of C; the", nv, L, L, L-1)
	p("// loop takes one p at a time, so each element of C is one chain in")
	p("// increasing p. Requires AVX2, nj ≥ 1 and kc ≥ 1; strides in elements.")
	p("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	if masked {
		p("\tMOVQ mask+80(FP), DX")
		p("\tVMOVDQU (DX), Y13")
	}
	accEntry(p, e, name, mr)
	for r := range mr {
		for v := range nv {
			load(rowAddr(32*v, r, "DI", "R14", "R13"), r*nv+v)
		}
	}
	p("%s_loop:", name)
	for v := range nv {
		load(fmt.Sprintf("%d(DX)", 32*v), 12+v)
	}
	for r := range mr {
		p("\tVBROADCAST%s %s, Y14", e.sc, rowAddr(0, r, "R8", "R9", "R10"))
		for v := range nv {
			// C += A·B rounded once, A the first factor as in the
			// reference loops (it decides which NaN payload survives).
			p("\tVFMADD231%s Y%d, Y14, Y%d", e.pk, 12+v, r*nv+v)
		}
	}
	accAdvance(p, name, mr)
	for r := range mr {
		for v := range nv {
			if masked {
				p("\tVMASKMOV%s Y%d, Y13, %s", e.pk, r*nv+v, rowAddr(32*v, r, "DI", "R14", "R13"))
			} else {
				p("\tVMOVU%s Y%d, %s", e.pk, r*nv+v, rowAddr(32*v, r, "DI", "R14", "R13"))
			}
		}
	}
	accExit(p, e, name, nr)
}

// accZ writes accKernZ{mr}x{nr}, acc's unmasked kernel on ZMM registers:
// 2·lanes columns a vector (eight float64, 16 float32), so a row of a tile
// of four (two) YMM widths takes two (one) fused multiply-adds a step
// where acc's takes four (two). The sums
// are acc's, product by product: each element of C is one chain in
// increasing p, whatever the vector width.
func accZ(p func(string, ...any), e elem, mr, nr int) {
	L := 2 * e.lanes()
	nv := nr / L
	name := e.name("accKernZ%dx%d", mr, nr)
	p("")
	p("// func %s(nj, kc int, a *%[2]s, rs, ks int, b *%[2]s, ldb, bstep int, c *%[2]s, ldc int)", name, e.goType)
	p("//")
	p("// Z(r·%d+v) accumulates columns %dv..%dv+%d of row r of a tile of C; the", nv, L, L, L-1)
	p("// loop takes one p at a time, so each element of C is one chain in")
	p("// increasing p. Requires AVX-512F, nj ≥ 1 and kc ≥ 1; strides in elements.")
	p("TEXT ·%s(SB), NOSPLIT, $0-80", name)
	accEntry(p, e, name, mr)
	for r := range mr {
		for v := range nv {
			p("\tVMOVU%s %s, Z%d", e.pk, rowAddr(64*v, r, "DI", "R14", "R13"), r*nv+v)
		}
	}
	p("%s_loop:", name)
	for v := range nv {
		p("\tVMOVU%s %d(DX), Z%d", e.pk, 64*v, 12+v)
	}
	for r := range mr {
		p("\tVBROADCAST%s %s, Z14", e.sc, rowAddr(0, r, "R8", "R9", "R10"))
		for v := range nv {
			// C += A·B rounded once, A the first factor as acc's
			// kernels and the reference loops order it.
			p("\tVFMADD231%s Z%d, Z14, Z%d", e.pk, 12+v, r*nv+v)
		}
	}
	accAdvance(p, name, mr)
	for r := range mr {
		for v := range nv {
			p("\tVMOVU%s Z%d, %s", e.pk, r*nv+v, rowAddr(64*v, r, "DI", "R14", "R13"))
		}
	}
	accExit(p, e, name, nr)
}

// accEntry loads the arguments shared by acc's and accZ's kernels (strides
// in bytes) and opens the tile loop: R8 and R9 walk rows 0–2 and 3–5 of
// A, DX the rows of B, DI and R14 rows 0–2 and 3–5 of C, CX counts p.
func accEntry(p func(string, ...any), e elem, name string, mr int) {
	p("\tMOVQ nj+0(FP), BX")
	p("\tMOVQ a+16(FP), SI")
	p("\tMOVQ rs+24(FP), R10")
	p("\tSHLQ $%d, R10", e.shift)
	p("\tMOVQ ks+32(FP), R11")
	p("\tSHLQ $%d, R11", e.shift)
	p("\tMOVQ b+40(FP), AX")
	p("\tMOVQ ldb+48(FP), R12")
	p("\tSHLQ $%d, R12", e.shift)
	p("\tMOVQ c+64(FP), DI")
	p("\tMOVQ ldc+72(FP), R13")
	p("\tSHLQ $%d, R13", e.shift)
	p("%s_tile:", name)
	p("\tMOVQ SI, R8")
	p("\tMOVQ AX, DX")
	p("\tMOVQ kc+8(FP), CX")
	if mr > 3 {
		p("\tLEAQ (R8)(R10*2), R9")
		p("\tADDQ R10, R9")
		p("\tLEAQ (DI)(R13*2), R14")
		p("\tADDQ R13, R14")
	}
}

// accAdvance moves A and B to the next p and closes the p loop.
func accAdvance(p func(string, ...any), name string, mr int) {
	p("\tADDQ R11, R8")
	if mr > 3 {
		p("\tADDQ R11, R9")
	}
	p("\tADDQ R12, DX")
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
}

// accExit moves C and B to the next tile, closes the tile loop and
// returns.
func accExit(p func(string, ...any), e elem, name string, nr int) {
	p("\tADDQ $%d, DI", e.size*nr)
	p("\tMOVQ bstep+56(FP), DX")
	p("\tSHLQ $%d, DX", e.shift)
	p("\tADDQ DX, AX")
	p("\tDECQ BX")
	p("\tJNZ %s_tile", name)
	p("\tVZEROUPPER")
	p("\tRET")
}
