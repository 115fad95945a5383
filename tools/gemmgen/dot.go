package main

import "fmt"

// dot writes dotKern{mr}x{nr}: mr × nr outputs of DotNT per tile, for nj
// tiles side by side (tile t uses rows nr·t… of B and columns nr·t… of C).
// Lane l of an accumulator is the partial sum s_l of dot order over the
// whole blocks of four; after the loop each output takes its one to three
// remaining products into s_0 in order and is combined as (s_0 + s_2) +
// (s_1 + s_3). Every product enters its sum by a fused multiply-add. A and
// B are k-contiguous rows (strides lda, ldb in elements). With evex set the
// kernel is named dotKernX and keeps A and B in the sixteen more YMM
// registers of AVX-512VL, which leaves room for a 4 × 4 tile.
func dot(p func(string, ...any), mr, nr int, evex bool) {
	name := fmt.Sprintf("dotKern%dx%d", mr, nr)
	areg, breg := 9, 12
	need := "AVX2"
	if evex {
		name = fmt.Sprintf("dotKernX%dx%d", mr, nr)
		areg, breg = 16, 20
		need = "AVX-512F and AVX-512VL"
	}
	nout := mr * nr
	p("")
	p("// func %s(nj, k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int)", name)
	p("//")
	p("// Y(r·%d+c) accumulates output (r, c). Requires %s, nj ≥ 1, k ≥ 1.", nr, need)
	p("TEXT ·%s(SB), NOSPLIT, $0-64", name)
	dotEntry(p, f64, name, mr, nr)
	for i := range nout {
		p("\tVXORPD Y%d, Y%d, Y%d", i, i, i)
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tSHRQ $2, CX")
	p("\tJZ %s_tail", name)
	p("%s_loop:", name)
	for r := range mr {
		p("\tVMOVUPD %s, Y%d", rowAddr(0, r, "R8", "R9", "R10"), areg+r)
	}
	for c := range nr {
		p("\tVMOVUPD %s, Y%d", rowAddr(0, c, "DX", "R12", "R11"), breg)
		for r := range mr {
			// s += A·B rounded once, A the first factor as in the
			// reference loop.
			p("\tVFMADD231PD Y%d, Y%d, Y%d", breg, areg+r, r*nr+c)
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
			p("\tVMOVAPD Y%d, Y%d", o, 16+o)
			home[o] = 16 + o
		}
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tANDQ $3, CX")
	for o := range nout {
		r, c := o/nr, o%nr
		q := home[o]
		if q >= 16 {
			// Outputs 0 and 1 are stored by now: reuse their registers.
			p("\tVMOVAPD Y%d, Y%d", q, o-14)
			q = o - 14
		}
		dotFinish(p, fmt.Sprintf("%s_comb%d", name, o), q, r, c)
	}
	dotExit(p, f64, name, nr)
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
// to both halves, rows 2q and 2q+1 of B side by side), so one fused
// multiply-add serves two outputs and the bits are dot's. The finish parks the
// sums and runs dot's sequence on each half in VEX registers.
//
// With packed, it writes dotKernZP{mr}x8 (np = 4), which reads B's pairs of
// rows from a sliver packed by packPairs8 (argument bp, walked in R15
// from tile to tile): one 512-bit load a pair, where the rows in place
// take a load and an insert, a lane shuffle that competes with the
// arithmetic (on Zen 5 the kernel ran 20–30 % faster without them). The one to three products left over (k mod 4) are read from B's
// rows as dotKernZ reads them.
func dotZ(p func(string, ...any), mr, np int, packed bool) {
	nr := 2 * np
	name := fmt.Sprintf("dotKernZ%dx%d", mr, nr)
	args, frame := "", 64
	if packed {
		name, args, frame = fmt.Sprintf("dotKernZP%dx%d", mr, nr), ", bp *float64", 72
	}
	nacc := mr * np
	// A's rows and B's pair of rows follow the sums, from
	// Z16 or, when the sums fill more than Z0–Z15, right after them.
	areg, breg := 16, 20 // (A's four rows at most in Z16–Z19)
	if nacc > 16 {
		areg = nacc
	}
	breg = max(breg, areg+mr)
	p("")
	p("// func %s(nj, k int, a *float64, lda int, b *float64, ldb int, c *float64, ldc int%s)", name, args)
	p("//")
	p("// Z(r·%d+q) accumulates outputs (r, 2q) and (r, 2q+1). Requires", np)
	p("// AVX-512F and AVX-512VL, nj ≥ 1, k ≥ 1.")
	p("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	if packed {
		p("\tMOVQ bp+64(FP), R15")
	}
	dotEntry(p, f64, name, mr, nr)
	for i := range nacc {
		p("\tVXORPD Z%d, Z%d, Z%d", i, i, i)
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tSHRQ $2, CX")
	p("\tJZ %s_tail", name)
	p("%s_loop:", name)
	for r := range mr {
		p("\tVBROADCASTF64X4 %s, Z%d", rowAddr(0, r, "R8", "R9", "R10"), areg+r)
	}
	for q := range np {
		if packed {
			p("\tVMOVUPD %d(R15), Z%d", 64*q, breg)
		} else {
			p("\tVMOVUPD %s, Y%d", rowAddr8(0, 2*q, dotB, "R11"), breg)
			p("\tVINSERTF64X4 $1, %s, Z%d, Z%d", rowAddr8(0, 2*q+1, dotB, "R11"), breg, breg)
		}
		for r := range mr {
			// s += A·B rounded once, as in dot's kernels.
			p("\tVFMADD231PD Z%d, Z%d, Z%d", breg, areg+r, r*np+q)
		}
	}
	p("\tADDQ $32, R8")
	if mr > 3 {
		p("\tADDQ $32, R9")
	}
	if packed {
		p("\tADDQ $%d, R15", 64*np)
	} else {
		for i, b := range dotB {
			if i == 0 || i == 1 && nr > 3 || i == 2 && nr > 6 {
				p("\tADDQ $32, %s", b)
			}
		}
	}
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("%s_tail:", name)
	if packed {
		// B's rows to the products left over, where dotKernZ's loop
		// leaves them.
		p("\tMOVQ k+8(FP), CX")
		p("\tANDQ $-4, CX")
		p("\tSHLQ $3, CX")
		for i, b := range dotB {
			if i == 0 || i == 1 && nr > 3 || i == 2 && nr > 6 {
				p("\tADDQ CX, %s", b)
			}
		}
	}
	// The finish runs in Y0 with X14 and X15 for scratch: the sums are
	// parked in Z16–Z31 or, where they fill more than Z0–Z15, only those
	// in Z0, Z14 and Z15, in A's registers.
	parked := func(i int) int { return 16 + i }
	if nacc > 16 {
		parked = func(i int) int {
			switch i {
			case 0:
				return areg
			case 14, 15:
				return areg + i - 13
			}
			return i
		}
		for _, i := range []int{0, 14, 15} {
			p("\tVMOVAPD Z%d, Z%d", i, parked(i))
		}
	} else {
		for i := range nacc {
			p("\tVMOVAPD Z%d, Z%d", i, parked(i))
		}
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tANDQ $3, CX")
	for i := range nacc {
		r, q := i/np, i%np
		for h := range 2 {
			c := 2*q + h
			o := fmt.Sprintf("%s_r%dc%d", name, r, c)
			if h == 0 {
				p("\tVMOVAPD Y%d, Y0", parked(i))
			} else {
				p("\tVEXTRACTF64X4 $1, Z%d, Y0", parked(i))
			}
			dotFinish(p, o, 0, r, c)
		}
	}
	dotExit(p, f64, name, nr)
}

// packPairs8 writes packPairs8, which packs eight rows of B (k-contiguous,
// one leading dimension apart) for dotKernZP: for each step of four k, rows
// 2q and 2q+1's four values side by side, q = 0…3 (32 values a step).
func packPairs8(p func(string, ...any)) {
	const name = "packPairs8"
	bases := [3]string{"SI", "R9", "R10"}
	p("")
	p("// func %s(k4 int, b *float64, ldb int, d *float64)", name)
	p("//")
	p("// Packs columns 0 … 4·k4−1 of rows 0–7 of b. Requires AVX, k4 ≥ 1.")
	p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	p("\tMOVQ k4+0(FP), CX")
	p("\tMOVQ b+8(FP), SI")
	p("\tMOVQ ldb+16(FP), R8")
	p("\tSHLQ $3, R8")
	p("\tMOVQ d+24(FP), DI")
	p("\tLEAQ (SI)(R8*2), R9")
	p("\tADDQ R8, R9")
	p("\tLEAQ (R9)(R8*2), R10")
	p("\tADDQ R8, R10")
	p("%s_loop:", name)
	for t := range 8 {
		p("\tVMOVUPD %s, Y%d", rowAddr8(0, t, bases, "R8"), t)
	}
	for t := range 8 {
		p("\tVMOVUPD Y%d, %d(DI)", t, 32*t)
	}
	for _, b := range bases {
		p("\tADDQ $32, %s", b)
	}
	p("\tADDQ $256, DI")
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("\tVZEROUPPER")
	p("\tRET")
}

// dotB holds the bases of rows 0–2, 3–5 and 6–8 of B in the dot kernels.
var dotB = [3]string{"DX", "R12", "SI"}

// dotEntry loads the arguments shared by the dot-order kernels (strides
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

// dotFinish ends output (r, c), whose four partial sums are in Yq (q <
// 16, a VEX register): the one to three remaining products go into s_0 in
// order (CX holds k mod 4), then (s_0 + s_2) + (s_1 + s_3) is stored. X14
// and X15 are scratch; label marks the combination.
func dotFinish(p func(string, ...any), label string, q, r, c int) {
	p("\tVEXTRACTF128 $1, Y%d, X14", q)
	for e := range 3 {
		p("\tCMPQ CX, $%d", e+1)
		p("\tJLT %s", label)
		p("\tVMOVSD %s, X15", rowAddr(8*e, r, "R8", "R9", "R10"))
		p("\tVFMADD231SD %s, X15, X%d", rowAddr8(8*e, c, dotB, "R11"), q)
	}
	p("%s:", label)
	p("\tVADDPD X14, X%d, X%d", q, q)
	p("\tVUNPCKHPD X%d, X%d, X14", q, q)
	p("\tVADDSD X14, X%d, X%d", q, q)
	p("\tVMOVSD X%d, %s", q, rowAddr(8*c, r, "DI", "R14", "R13"))
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
