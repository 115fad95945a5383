package main

import "fmt"

// dot writes dotKern{mr}x{nr}: mr × nr outputs of DotNT per tile, for nj
// tiles side by side (tile t uses rows nr·t… of B and columns nr·t… of C).
// Lane l of an accumulator is the partial sum s_l of dot order over the
// whole blocks of four; after the loop each output takes its one to three
// remaining products into s_0 in order and is combined as (s_0 + s_2) +
// (s_1 + s_3), the sequence dot4AVX2 in internal/vec uses. A and B are
// k-contiguous rows (strides lda, ldb in elements). With evex set the
// kernel is named dotKernX and keeps A, B and the product in the sixteen
// more YMM registers of AVX-512VL, which leaves room for a 4 × 4 tile.
//
// In float32 (e = f32, names with a leading s) a register holds eight
// partial sums: lane l sums k ≡ l (mod 8) over the whole blocks of eight,
// the one to seven remaining products go into s_0 in order, and the
// combination is ((s_0 + s_4) + (s_2 + s_6)) + ((s_1 + s_5) + (s_3 + s_7)):
// the halves added, then float64's sequence on the four sums.
func dot(p func(string, ...any), e elem, mr, nr int, evex bool) {
	name := e.name("dotKern%dx%d", mr, nr)
	areg, breg, tmp := 9, 12, 13
	need := "AVX2"
	if evex {
		name = e.name("dotKernX%dx%d", mr, nr)
		areg, breg, tmp = 16, 20, 21
		need = "AVX-512F and AVX-512VL"
	}
	nout := mr * nr
	p("")
	p("// func %s(nj, k int, a *%[2]s, lda int, b *%[2]s, ldb int, c *%[2]s, ldc int)", name, e.goType)
	p("//")
	p("// Y(r·%d+c) accumulates output (r, c). Requires %s, nj ≥ 1, k ≥ 1.", nr, need)
	p("TEXT ·%s(SB), NOSPLIT, $0-64", name)
	dotEntry(p, e, name, mr, nr)
	for i := range nout {
		p("\tVXOR%s Y%d, Y%d, Y%d", e.pk, i, i, i)
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tSHRQ $%d, CX", e.lanesLog())
	p("\tJZ %s_tail", name)
	p("%s_loop:", name)
	for r := range mr {
		p("\tVMOVU%s %s, Y%d", e.pk, rowAddr(0, r, "R8", "R9", "R10"), areg+r)
	}
	for c := range nr {
		p("\tVMOVU%s %s, Y%d", e.pk, rowAddr(0, c, "DX", "R12", "R11"), breg)
		for r := range mr {
			// Intel order tmp = A·B, as in the reference loop.
			p("\tVMUL%s Y%d, Y%d, Y%d", e.pk, breg, areg+r, tmp)
			p("\tVADD%s Y%d, Y%d, Y%d", e.pk, tmp, r*nr+c, r*nr+c)
		}
	}
	p("\tADDQ $32, R8")
	if mr > 3 {
		p("\tADDQ $32, R9")
	}
	p("\tADDQ $32, DX")
	if nr > 3 {
		p("\tADDQ $32, R12")
	}
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("%s_tail:", name)
	// The finish needs two scratch registers below Y16 (VEX encodings);
	// a 4 × 4 tile parks its last two sums in Y30, Y31 meanwhile.
	home := make([]int, nout)
	for o := range home {
		home[o] = o
	}
	if nout > 14 {
		for o := 14; o < nout; o++ {
			p("\tVMOVA%s Y%d, Y%d", e.pk, o, 16+o)
			home[o] = 16 + o
		}
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tANDQ $%d, CX", e.lanes()-1)
	for o := range nout {
		r, c := o/nr, o%nr
		q := home[o]
		if q >= 16 {
			// Outputs 0 and 1 are stored by now: reuse their registers.
			p("\tVMOVA%s Y%d, Y%d", e.pk, q, o-14)
			q = o - 14
		}
		dotFinish(p, e, fmt.Sprintf("%s_comb%d", name, o), q, r, c)
	}
	dotExit(p, e, name, nr)
}

// rowAddr8 returns the address of row r < 9 of a matrix whose rows 0–2
// start at bases[0] + r·stride, rows 3–5 at bases[1] + (r−3)·stride and
// rows 6–8 at bases[2] + (r−6)·stride.
func rowAddr8(off, r int, bases [3]string, stride string) string {
	if r >= 6 {
		return rowAddr(off, r-6, bases[2], bases[2], stride)
	}
	return rowAddr(off, r, bases[0], bases[1], stride)
}

// dotZ writes dotKernZ{mr}x{2·np}: dot's kernel with two outputs a ZMM
// register, (r, 2q) in the lower four lanes of Z(r·np+q) and (r, 2q+1) in
// the upper four. Each four-lane half holds dot order's partial sums s_0…s_3
// exactly as dot's YMM accumulators do (row r of A's four values broadcast
// to both halves, rows 2q and 2q+1 of B side by side), so one multiply and
// one add serve two outputs and the bits are dot's. The finish parks the
// sums in Z16–Z31 and runs dot's sequence on each half in VEX registers.
// In float32 each half holds the eight partial sums of dot's float32 order.
func dotZ(p func(string, ...any), e elem, mr, np int) {
	nr := 2 * np
	name := e.name("dotKernZ%dx%d", mr, nr)
	nacc := mr * np
	const areg, breg, tmp = 16, 20, 21
	p("")
	p("// func %s(nj, k int, a *%[2]s, lda int, b *%[2]s, ldb int, c *%[2]s, ldc int)", name, e.goType)
	p("//")
	p("// Z(r·%d+q) accumulates outputs (r, 2q) and (r, 2q+1). Requires", np)
	p("// AVX-512F and AVX-512VL, nj ≥ 1, k ≥ 1.")
	p("TEXT ·%s(SB), NOSPLIT, $0-64", name)
	dotEntry(p, e, name, mr, nr)
	for i := range nacc {
		p("\tVXOR%s Z%d, Z%d, Z%d", e.pk, i, i, i)
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tSHRQ $%d, CX", e.lanesLog())
	p("\tJZ %s_tail", name)
	p("%s_loop:", name)
	for r := range mr {
		p("\tVBROADCASTF64X4 %s, Z%d", rowAddr(0, r, "R8", "R9", "R10"), areg+r)
	}
	for q := range np {
		p("\tVMOVU%s %s, Y%d", e.pk, rowAddr8(0, 2*q, dotB, "R11"), breg)
		p("\tVINSERTF64X4 $1, %s, Z%d, Z%d", rowAddr8(0, 2*q+1, dotB, "R11"), breg, breg)
		for r := range mr {
			// Intel order tmp = A·B, as in dot's kernels.
			p("\tVMUL%s Z%d, Z%d, Z%d", e.pk, breg, areg+r, tmp)
			p("\tVADD%s Z%d, Z%d, Z%d", e.pk, tmp, r*np+q, r*np+q)
		}
	}
	p("\tADDQ $32, R8")
	if mr > 3 {
		p("\tADDQ $32, R9")
	}
	for i, b := range dotB {
		if i == 0 || i == 1 && nr > 3 || i == 2 && nr > 6 {
			p("\tADDQ $32, %s", b)
		}
	}
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("%s_tail:", name)
	for i := range nacc {
		p("\tVMOVA%s Z%d, Z%d", e.pk, i, 16+i)
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tANDQ $%d, CX", e.lanes()-1)
	for i := range nacc {
		r, q := i/np, i%np
		for h := range 2 {
			c := 2*q + h
			o := fmt.Sprintf("%s_r%dc%d", name, r, c)
			if h == 0 {
				p("\tVMOVA%s Y%d, Y0", e.pk, 16+i)
			} else {
				p("\tVEXTRACTF64X4 $1, Z%d, Y0", 16+i)
			}
			dotFinish(p, e, o, 0, r, c)
		}
	}
	dotExit(p, e, name, nr)
}

// dotB holds the bases of rows 0–2, 3–5 and 6–8 of B in the dot kernels.
var dotB = [3]string{"DX", "R12", "SI"}

// dotEntry loads the arguments shared by dot's and dotZ's kernels (strides
// in bytes) and opens the tile loop: R8 and R9 walk rows 0–2 and 3–5 of
// A, DX, R12 and SI rows 0–2, 3–5 and 6–8 of B, DI and R14 rows 0–2 and
// 3–5 of C.
func dotEntry(p func(string, ...any), e elem, name string, mr, nr int) {
	p("\tMOVQ nj+0(FP), BX")
	p("\tMOVQ lda+24(FP), R10")
	p("\tSHLQ $%d, R10", e.shift)
	p("\tMOVQ b+32(FP), AX")
	p("\tMOVQ ldb+40(FP), R11")
	p("\tSHLQ $%d, R11", e.shift)
	p("\tMOVQ c+48(FP), DI")
	p("\tMOVQ ldc+56(FP), R13")
	p("\tSHLQ $%d, R13", e.shift)
	p("%s_tile:", name)
	p("\tMOVQ a+16(FP), R8")
	p("\tMOVQ AX, DX")
	if mr > 3 {
		p("\tLEAQ (R8)(R10*2), R9")
		p("\tADDQ R10, R9")
		p("\tLEAQ (DI)(R13*2), R14")
		p("\tADDQ R13, R14")
	}
	if nr > 3 {
		p("\tLEAQ (DX)(R11*2), R12")
		p("\tADDQ R11, R12")
	}
	if nr > 6 {
		p("\tLEAQ (R12)(R11*2), SI")
		p("\tADDQ R11, SI")
	}
}

// dotFinish ends output (r, c), whose partial sums are in Yq (q < 16, a
// VEX register): the remaining products (CX holds k mod lanes) go into s_0
// in order, then the sums are combined as dot order prescribes and stored:
// (s_0 + s_2) + (s_1 + s_3) in float64; in float32 the upper half is added
// to the lower first, t_l = s_l + s_{l+4}, then (t_0 + t_2) + (t_1 + t_3).
// X14 and X15 are scratch; label marks the combination.
func dotFinish(p func(string, ...any), e elem, label string, q, r, c int) {
	p("\tVEXTRACTF128 $1, Y%d, X14", q)
	for i := range e.lanes() - 1 {
		p("\tCMPQ CX, $%d", i+1)
		p("\tJLT %s", label)
		p("\tVMOV%s %s, X15", e.sc, rowAddr(e.size*i, r, "R8", "R9", "R10"))
		p("\tVMUL%s %s, X15, X15", e.sc, rowAddr8(e.size*i, c, dotB, "R11"))
		p("\tVADD%s X15, X%d, X%d", e.sc, q, q)
	}
	p("%s:", label)
	p("\tVADD%s X14, X%d, X%d", e.pk, q, q)
	if e == f32 {
		p("\tVMOVHLPS X%d, X%d, X14", q, q)
		p("\tVADDPS X14, X%d, X%d", q, q)
		p("\tVMOVSHDUP X%d, X14", q)
	} else {
		p("\tVUNPCKHPD X%d, X%d, X14", q, q)
	}
	p("\tVADD%s X14, X%d, X%d", e.sc, q, q)
	p("\tVMOV%s X%d, %s", e.sc, q, rowAddr(e.size*c, r, "DI", "R14", "R13"))
}

// dotExit moves C and B to the next tile of nr columns (nr ≤ 8), closes
// the tile loop and returns.
func dotExit(p func(string, ...any), e elem, name string, nr int) {
	p("\tADDQ $%d, DI", e.size*nr)
	for left := nr; left > 0; {
		step := min(left&-left, 8) // the largest LEAQ scale dividing left
		if step == 1 {
			p("\tADDQ R11, AX")
		} else {
			p("\tLEAQ (AX)(R11*%d), AX", step)
		}
		left -= step
	}
	p("\tDECQ BX")
	p("\tJNZ %s_tile", name)
	p("\tVZEROUPPER")
	p("\tRET")
}
