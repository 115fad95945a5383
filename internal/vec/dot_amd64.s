#include "textflag.h"

// func dot4AVX2(a []float64, r0, r1, r2, r3 *float64, out *[4]float64)
//
// out[k] = Σ_i r_k[i]·a[i] over len(a) elements, for four rows at once,
// summed exactly as gonum's DotUnitary sums one: four partial sums s_0..s_3
// (s_l takes the elements i ≡ l mod 4 of the whole blocks of four, in
// order), the 1–3 remaining elements added to s_0 in order, then
// (s_0 + s_2) + (s_1 + s_3). Lane l of accumulator Y_k is s_l of row k, so
// the four rows are four independent chains. Requires AVX2 (checked by the
// caller); the rows must hold len(a) elements.
TEXT ·dot4AVX2(SB), NOSPLIT, $0-64
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ r0+24(FP), R8
	MOVQ r1+32(FP), R9
	MOVQ r2+40(FP), R10
	MOVQ r3+48(FP), R11
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-4, BX
	JZ reduce

loop4:
	VMOVUPD (SI)(AX*8), Y4
	VMULPD (R8)(AX*8), Y4, Y5
	VMULPD (R9)(AX*8), Y4, Y6
	VMULPD (R10)(AX*8), Y4, Y7
	VMULPD (R11)(AX*8), Y4, Y8
	VADDPD Y5, Y0, Y0
	VADDPD Y6, Y1, Y1
	VADDPD Y7, Y2, Y2
	VADDPD Y8, Y3, Y3
	ADDQ $4, AX
	CMPQ AX, BX
	JL loop4

reduce:
	// X_k = (s_0, s_1), X9..X12 = (s_2, s_3) of each row.
	VEXTRACTF128 $1, Y0, X9
	VEXTRACTF128 $1, Y1, X10
	VEXTRACTF128 $1, Y2, X11
	VEXTRACTF128 $1, Y3, X12
	CMPQ AX, CX
	JGE combine

tail:
	// s_0 += r_k[i]·a[i]; VADDSD keeps the upper lane (s_1) of its
	// first source.
	VMOVSD (SI)(AX*8), X4
	VMULSD (R8)(AX*8), X4, X5
	VMULSD (R9)(AX*8), X4, X6
	VMULSD (R10)(AX*8), X4, X7
	VMULSD (R11)(AX*8), X4, X8
	VADDSD X5, X0, X0
	VADDSD X6, X1, X1
	VADDSD X7, X2, X2
	VADDSD X8, X3, X3
	INCQ AX
	CMPQ AX, CX
	JL tail

combine:
	MOVQ out+56(FP), DI
	// (s_0 + s_2, s_1 + s_3), then the sum of the two lanes.
	VADDPD X9, X0, X0
	VADDPD X10, X1, X1
	VADDPD X11, X2, X2
	VADDPD X12, X3, X3
	VUNPCKHPD X0, X0, X5
	VUNPCKHPD X1, X1, X6
	VUNPCKHPD X2, X2, X7
	VUNPCKHPD X3, X3, X8
	VADDSD X0, X5, X5
	VADDSD X1, X6, X6
	VADDSD X2, X7, X7
	VADDSD X3, X8, X8
	VMOVSD X5, (DI)
	VMOVSD X6, 8(DI)
	VMOVSD X7, 16(DI)
	VMOVSD X8, 24(DI)
	VZEROUPPER
	RET
