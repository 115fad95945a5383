package main

import "fmt"

// dot16 writes sdotKern{variant}{mr}x{nr}: mr × nr outputs of
// float32's DotNT per tile, for nj tiles side by side, in float32's dot
// order: sixteen partial sums s_l over k ≡ l (mod 16) of the whole blocks
// of sixteen, the one to fifteen remaining products added to s_0 in order,
// then t_l = s_l + s_{l+8} and ((t_0 + t_4) + (t_2 + t_6)) + ((t_1 + t_5) +
// (t_3 + t_7)). An output's sums fill one ZMM register, or two YMM ones
// (s_0…s_7 and s_8…s_15), so every load is a plain vector load of a row
// of A or B, as in the chain-order kernels: no lane shuffles in the loop.
// The variants: "" on YMM registers (AVX2; up to six outputs, their sums
// in Y0–Y11), "X" on the 32 YMM registers of AVX-512VL (up to twelve, in
// Y0–Y23) and "Z" on ZMM registers (AVX-512F; up to sixteen, in Z0–Z15).
func dot16(p func(string, ...any), variant string, mr, nr int) {
	z := variant == "Z"
	rpo, vr, need := 2, "Y", map[string]string{"": "AVX2", "X": "AVX-512F and AVX-512VL"}[variant]
	if z {
		rpo, vr, need = 1, "Z", "AVX-512F"
	}
	name := f32.name("dotKern%s%dx%d", variant, mr, nr)
	nout := mr * nr
	nacc := nout * rpo
	acc := func(o, h int) int { return o*rpo + h }
	// A's rows and B's row follow the sums (from Z16 on
	// ZMM, where the sums may fill Z0–Z15; a tile of more than sixteen
	// outputs takes the registers from Z24 on).
	areg := nacc
	if z {
		areg = max(16, nacc)
	}
	breg := areg + mr
	p("")
	p("// func %s(nj, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)", name)
	p("//")
	if z {
		p("// Z(r·%d+c) accumulates output (r, c). Requires %s, nj ≥ 1, k ≥ 1.", nr, need)
	} else {
		p("// Y(2(r·%d+c)) and Y(2(r·%d+c)+1) accumulate output (r, c). Requires", nr, nr)
		p("// %s, nj ≥ 1, k ≥ 1.", need)
	}
	p("TEXT ·%s(SB), NOSPLIT, $0-64", name)
	dotEntry(p, f32, name, mr, nr)
	for i := range nacc {
		p("\tVXORPS %s%d, %s%d, %s%d", vr, i, vr, i, vr, i)
	}
	p("\tMOVQ k+8(FP), CX")
	p("\tSHRQ $4, CX")
	p("\tJZ %s_tail", name)
	p("%s_loop:", name)
	for h := range rpo {
		for r := range mr {
			p("\tVMOVUPS %s, %s%d", rowAddr(32*h, r, "R8", "R9", "R10"), vr, areg+r)
		}
		for c := range nr {
			p("\tVMOVUPS %s, %s%d", rowAddr(32*h, c, "DX", "R12", "R11"), vr, breg)
			for r := range mr {
				// s += A·B rounded once, A the first factor as in the
				// reference loop.
				p("\tVFMADD231PS %s%d, %s%d, %s%d", vr, breg, vr, areg+r, vr, acc(r*nr+c, h))
			}
		}
	}
	p("\tADDQ $64, R8")
	if mr > 3 {
		p("\tADDQ $64, R9")
	}
	p("\tADDQ $64, DX")
	if nr > 3 {
		p("\tADDQ $64, R12")
	}
	p("\tDECQ CX")
	p("\tJNZ %s_loop", name)
	p("%s_tail:", name)
	if z {
		// With no products left over, every output of the tile ends in one
		// tree of shuffles (dot16TreeZ); otherwise each ends on its own.
		p("\tMOVQ k+8(FP), CX")
		p("\tTESTQ $15, CX")
		p("\tJNZ %s_each", name)
		dot16TreeZ(p, mr, nr)
		p("\tJMP %s_next", name)
		p("%s_each:", name)
	}
	// The finish runs in VEX registers (below 16) and needs three of them
	// for scratch, Y12, X14 and X15 on YMM: outputs 6 and 7 move out of
	// Y12–Y15 first (to Y24–Y27, free after the loop), and every output
	// from the seventh on is moved into the registers of an output
	// already stored. On ZMM the sums are parked in Z16–Z31 and each
	// output's halves brought to Y0 and Y1.
	home := func(o, h int) int { return acc(o, h) }
	if !z && nout > 6 {
		for o := 6; o < min(nout, 8); o++ {
			for h := range 2 {
				p("\tVMOVAPS Y%d, Y%d", acc(o, h), 12+acc(o, h))
			}
		}
		home = func(o, h int) int {
			if o < 8 {
				return 12 + acc(o, h)
			}
			return acc(o, h)
		}
	}
	// Where the sums fill more than Z0–Z15, only those of the outputs in
	// Z0–Z4, the finish's scratch, are parked (in Z24–Z28, A's registers),
	// and the scratch moves from X14–X15 to X3–X4.
	parked := func(o int) int { return 16 + o }
	s1, s2 := 14, 15
	if z && nout > 16 {
		parked = func(o int) int {
			if o < 5 {
				return 24 + o
			}
			return o
		}
		s1, s2 = 3, 4
		for o := range 5 {
			p("\tVMOVAPS Z%d, Z%d", o, parked(o))
		}
	} else if z {
		for o := range nout {
			p("\tVMOVAPS Z%d, Z%d", o, parked(o))
		}
	}
	for o := range nout {
		r, c := o/nr, o%nr
		lo, hi, t := acc(o, 0), acc(o, 1), 12
		switch {
		case z:
			lo, hi, t = 0, 1, 2
			p("\tVMOVAPS Y%d, Y0", parked(o))
			p("\tVEXTRACTF64X4 $1, Z%d, Y1", parked(o))
		case o >= 6:
			lo, hi = acc(o-6, 0), acc(o-6, 1)
			p("\tVMOVAPS Y%d, Y%d", home(o, 0), lo)
			p("\tVMOVAPS Y%d, Y%d", home(o, 1), hi)
		}
		dot16Finish(p, fmt.Sprintf("%s_r%dc%d", name, r, c), lo, hi, t, s1, s2, r, c)
	}
	if z {
		p("%s_next:", name)
	}
	dotExit(p, f32, name, nr)
}

// dot16Finish ends output (r, c), whose sums s_0…s_7 are in Ylo and
// s_8…s_15 in Yhi (VEX registers): t_l = s_l + s_{l+8} into Yt, whose
// lane 0 is redone when k mod 16 products remain (they go into s_0 in
// order first: A's and B's row pointers, left by the loop at those
// products, walk them and are put back), then the tree of dot16's doc is
// stored. Xs1 and Xs2 are scratch; label prefixes the local labels.
func dot16Finish(p func(string, ...any), label string, lo, hi, t, s1, s2, r, c int) {
	aBase, bBase := "R8", "DX"
	if r >= 3 {
		aBase = "R9"
	}
	if c >= 3 {
		bBase = "R12"
	}
	p("\tVADDPS Y%d, Y%d, Y%d", hi, lo, t)
	p("\tVEXTRACTF128 $1, Y%d, X%d", t, s1)
	p("\tMOVQ k+8(FP), CX")
	p("\tANDQ $15, CX")
	p("\tJZ %s_tree", label)
	p("%s_rem:", label)
	p("\tVMOVSS %s, X%d", rowAddr(0, r, "R8", "R9", "R10"), s2)
	p("\tVFMADD231SS %s, X%d, X%d", rowAddr(0, c, "DX", "R12", "R11"), s2, lo)
	p("\tADDQ $4, %s", aBase)
	p("\tADDQ $4, %s", bBase)
	p("\tDECQ CX")
	p("\tJNZ %s_rem", label)
	p("\tMOVQ k+8(FP), CX")
	p("\tANDQ $15, CX")
	p("\tSHLQ $2, CX")
	p("\tSUBQ CX, %s", aBase)
	p("\tSUBQ CX, %s", bBase)
	p("\tVADDSS X%d, X%d, X%d", hi, lo, lo)
	p("\tVMOVSS X%d, X%d, X%d", lo, t, t) // lane 0 ← s_0 + s_8, lanes 1–3 kept
	p("%s_tree:", label)
	p("\tVADDPS X%d, X%d, X%d", s1, t, t)
	p("\tVMOVHLPS X%d, X%d, X%d", t, t, s1)
	p("\tVADDPS X%d, X%d, X%d", s1, t, t)
	p("\tVMOVSHDUP X%d, X%d", t, s1)
	p("\tVADDSS X%d, X%d, X%d", s1, t, t)
	p("\tVMOVSS X%d, %s", t, rowAddr(4*c, r, "DI", "R14", "R13"))
}

// dot16TreeZ ends the outputs of an mr × nr tile of dot16's ZMM kernel,
// sixteen at a time (rows 4g … 4g+3), when no products are left over:
// each step of dot16's tree is one lane shuffle of two registers and one
// add, for up to sixteen outputs at once, where the finish of a single
// output runs it in a register of its own. The outputs sit in a 4 × 4 grid
// G[j][q] = output (4g+j, q); step 1 pairs rows j = 0, 1 and 2, 3 of a
// column (t_l = s_l + s_{l+8}: 256-bit halves), step 2 the two pairs (t_l +
// t_{l+4}: 128-bit quarters), step 3 columns 0, 1 and 2, 3 (lanes l and
// l+2 of a quarter), step 4 those two (lanes l and l+1). Quarter j of the
// result then holds row 4g+j: one 128-bit store when the row is four wide.
// A missing operand (fewer than four rows or columns) is replaced by its
// partner, whose lanes are then computed twice and not stored. Z30 and Z31
// (A's rows or B's row in the loop) are the shuffles' scratch, Z29 the
// stores'.
func dot16TreeZ(p func(string, ...any), mr, nr int) {
	const t1, t2, xs = 31, 30, 29
	// combine writes op(x, y) into x's register: lo = shuffle imLo of (x,
	// y), hi = shuffle imHi, x = lo + hi. y < 0 stands for x.
	combine := func(op string, imLo, imHi, x, y int) int {
		if x < 0 {
			return y
		}
		if y < 0 {
			y = x
		}
		p("\t%s $0x%X, Z%d, Z%d, Z%d", op, imLo, y, x, t1)
		p("\t%s $0x%X, Z%d, Z%d, Z%d", op, imHi, y, x, t2)
		p("\tVADDPS Z%d, Z%d, Z%d", t2, t1, x)
		return x
	}
	for g := 0; 4*g < mr; g++ {
		rows := min(4, mr-4*g)
		var col [4]int // step 2's result for column q, or −1
		for q := range 4 {
			col[q] = -1
			if q >= nr {
				continue
			}
			reg := func(j int) int {
				if j >= rows {
					return -1
				}
				return (4*g+j)*nr + q
			}
			// Step 1: halves [x.lo, y.lo] + [x.hi, y.hi].
			h01 := combine("VSHUFF32X4", 0x44, 0xEE, reg(0), reg(1))
			h23 := -1
			if reg(2) >= 0 {
				h23 = combine("VSHUFF32X4", 0x44, 0xEE, reg(2), reg(3))
			}
			// Step 2: quarters [x.0, x.2, y.0, y.2] + [x.1, x.3, y.1, y.3].
			col[q] = combine("VSHUFF32X4", 0x88, 0xDD, h01, h23)
		}
		// Step 3: lanes [x0, x1, y0, y1] + [x2, x3, y2, y3] of each quarter.
		w01 := combine("VSHUFPS", 0x44, 0xEE, col[0], col[1])
		w23 := -1
		if col[2] >= 0 {
			w23 = combine("VSHUFPS", 0x44, 0xEE, col[2], col[3])
		}
		// Step 4: lanes [x0, x2, y0, y2] + [x1, x3, y1, y3].
		f := combine("VSHUFPS", 0x88, 0xDD, w01, w23)
		for j := range rows {
			r := 4*g + j
			if nr == 4 {
				if j == 0 {
					p("\tVMOVUPS X%d, %s", f, rowAddr(0, r, "DI", "R14", "R13"))
				} else {
					p("\tVEXTRACTF32X4 $%d, Z%d, %s", j, f, rowAddr(0, r, "DI", "R14", "R13"))
				}
				continue
			}
			x := f
			if j > 0 {
				p("\tVEXTRACTF32X4 $%d, Z%d, X%d", j, f, xs)
				x = xs
			}
			for q := range nr {
				p("\tVEXTRACTPS $%d, X%d, %s", q, x, rowAddr(4*q, r, "DI", "R14", "R13"))
			}
		}
	}
}
