package main

import "fmt"

// acc writes accKern{mr}x{nr}: C[r][j] += Σ_p A(r, p)·B[p][j] for r < mr,
// j < nr over kc values of p, each product rounded and then added (chain
// order), for nj tiles side by side: tile t reads B from b + t·bstep and
// writes C from c + t·nr. A(r, p) sits at a + r·rs + p·ks, so one kernel
// serves A, Aᵀ and a packed sliver; looping over the tiles here rather
// than in Go spares a call per tile, which counts when k is small.
//
// With masked set, the kernel is accKern{mr}xm: a tile of one to three
// columns, those whose lane of *mask has its sign bit set. VMASKMOVPD loads
// and stores only those lanes (the others read as zero and are never
// written, nor does the load fault past the end of B or C), so odd widths
// run as vectors where they would otherwise be scalar chains.
func acc(p func(string, ...any), mr, nr int, masked bool) {
	nv := nr / 4
	name := fmt.Sprintf("accKern%dx%d", mr, nr)
	args, frame := "", 80
	if masked {
		name = fmt.Sprintf("accKern%dxm", mr)
		args, frame = ", mask *[4]int64", 88
	}
	load := func(src string, dst int) {
		if masked {
			p("\tVMASKMOVPD %s, Y13, Y%d", src, dst)
		} else {
			p("\tVMOVUPD %s, Y%d", src, dst)
		}
	}
	p("")
	p("// func %s(nj, kc int, a *float64, rs, ks int, b *float64, ldb, bstep int, c *float64, ldc int%s)", name, args)
	p("//")
	p("// Y(r·%d+v) accumulates columns 4v..4v+3 of row r of a tile of C; the", nv)
	p("// loop takes one p at a time, so each element of C is one chain in")
	p("// increasing p. Requires AVX2, nj ≥ 1 and kc ≥ 1; strides in elements.")
	p("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	if masked {
		p("\tMOVQ mask+80(FP), DX")
		p("\tVMOVDQU (DX), Y13")
	}
	accEntry(p, name, mr)
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
		p("\tVBROADCASTSD %s, Y14", rowAddr(0, r, "R8", "R9", "R10"))
		for v := range nv {
			// Intel order tmp = A·B: A is the first source, as in the
			// reference loops (it decides which NaN payload survives).
			p("\tVMULPD Y%d, Y14, Y15", 12+v)
			p("\tVADDPD Y15, Y%d, Y%d", r*nv+v, r*nv+v)
		}
	}
	accAdvance(p, name, mr)
	for r := range mr {
		for v := range nv {
			if masked {
				p("\tVMASKMOVPD Y%d, Y13, %s", r*nv+v, rowAddr(32*v, r, "DI", "R14", "R13"))
			} else {
				p("\tVMOVUPD Y%d, %s", r*nv+v, rowAddr(32*v, r, "DI", "R14", "R13"))
			}
		}
	}
	accExit(p, name, nr)
}

// accZ writes accKernZ{mr}x{nr}, acc's unmasked kernel on ZMM registers:
// eight columns a vector, so a row of a tile of 16 (8) columns takes two
// (one) multiplies and adds a step where acc's takes four (two). The sums
// are acc's, product by product: each element of C is one chain in
// increasing p, whatever the vector width.
func accZ(p func(string, ...any), mr, nr int) {
	nv := nr / 8
	name := fmt.Sprintf("accKernZ%dx%d", mr, nr)
	p("")
	p("// func %s(nj, kc int, a *float64, rs, ks int, b *float64, ldb, bstep int, c *float64, ldc int)", name)
	p("//")
	p("// Z(r·%d+v) accumulates columns 8v..8v+7 of row r of a tile of C; the", nv)
	p("// loop takes one p at a time, so each element of C is one chain in")
	p("// increasing p. Requires AVX-512F, nj ≥ 1 and kc ≥ 1; strides in elements.")
	p("TEXT ·%s(SB), NOSPLIT, $0-80", name)
	accEntry(p, name, mr)
	for r := range mr {
		for v := range nv {
			p("\tVMOVUPD %s, Z%d", rowAddr(64*v, r, "DI", "R14", "R13"), r*nv+v)
		}
	}
	p("%s_loop:", name)
	for v := range nv {
		p("\tVMOVUPD %d(DX), Z%d", 64*v, 12+v)
	}
	for r := range mr {
		p("\tVBROADCASTSD %s, Z14", rowAddr(0, r, "R8", "R9", "R10"))
		for v := range nv {
			// A·B with A the first source, as acc's kernels and the
			// reference loops order it.
			p("\tVMULPD Z%d, Z14, Z15", 12+v)
			p("\tVADDPD Z15, Z%d, Z%d", r*nv+v, r*nv+v)
		}
	}
	accAdvance(p, name, mr)
	for r := range mr {
		for v := range nv {
			p("\tVMOVUPD Z%d, %s", r*nv+v, rowAddr(64*v, r, "DI", "R14", "R13"))
		}
	}
	accExit(p, name, nr)
}

// accEntry loads the arguments shared by acc's and accZ's kernels (strides
// in bytes) and opens the tile loop: R8 and R9 walk rows 0–2 and 3–5 of
// A, DX the rows of B, DI and R14 rows 0–2 and 3–5 of C, CX counts p.
func accEntry(p func(string, ...any), name string, mr int) {
	p("\tMOVQ nj+0(FP), BX")
	p("\tMOVQ a+16(FP), SI")
	p("\tMOVQ rs+24(FP), R10")
	p("\tSHLQ $3, R10")
	p("\tMOVQ ks+32(FP), R11")
	p("\tSHLQ $3, R11")
	p("\tMOVQ b+40(FP), AX")
	p("\tMOVQ ldb+48(FP), R12")
	p("\tSHLQ $3, R12")
	p("\tMOVQ c+64(FP), DI")
	p("\tMOVQ ldc+72(FP), R13")
	p("\tSHLQ $3, R13")
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
func accExit(p func(string, ...any), name string, nr int) {
	p("\tADDQ $%d, DI", 8*nr)
	p("\tMOVQ bstep+56(FP), DX")
	p("\tSHLQ $3, DX")
	p("\tADDQ DX, AX")
	p("\tDECQ BX")
	p("\tJNZ %s_tile", name)
	p("\tVZEROUPPER")
	p("\tRET")
}
