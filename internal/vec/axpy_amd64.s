#include "textflag.h"

// func axpyAVX2(alpha float64, x, y []float64)
// Requires AVX2 (checked by the caller) and len(x) >= len(y).
// y[i] += alpha*x[i], len(y) == len(x); products then sums, no FMA.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSD alpha+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ y_base+32(FP), DI
	MOVQ y_len+40(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-16, BX
	JZ tail4
loop16:
	VMULPD (SI)(AX*8), Y0, Y1
	VMULPD 32(SI)(AX*8), Y0, Y2
	VMULPD 64(SI)(AX*8), Y0, Y3
	VMULPD 96(SI)(AX*8), Y0, Y4
	VADDPD (DI)(AX*8), Y1, Y1
	VADDPD 32(DI)(AX*8), Y2, Y2
	VADDPD 64(DI)(AX*8), Y3, Y3
	VADDPD 96(DI)(AX*8), Y4, Y4
	VMOVUPD Y1, (DI)(AX*8)
	VMOVUPD Y2, 32(DI)(AX*8)
	VMOVUPD Y3, 64(DI)(AX*8)
	VMOVUPD Y4, 96(DI)(AX*8)
	ADDQ $16, AX
	CMPQ AX, BX
	JL loop16
tail4:
	MOVQ CX, BX
	ANDQ $-4, BX
	CMPQ AX, BX
	JGE tail1
loop4:
	VMULPD (SI)(AX*8), Y0, Y1
	VADDPD (DI)(AX*8), Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, BX
	JL loop4
tail1:
	CMPQ AX, CX
	JGE done
loop1:
	VMULSD (SI)(AX*8), X0, X1
	VADDSD (DI)(AX*8), X1, X1
	VMOVSD X1, (DI)(AX*8)
	INCQ AX
	CMPQ AX, CX
	JL loop1
done:
	VZEROUPPER
	RET

// func axpy32AVX2(alpha float32, x, y []float32)
// axpyAVX2 in float32: y[i] += alpha*x[i], VMULPS then VADDPS (no FMA),
// the same operand order; 32, then 8, then 1 elements at a time. Requires
// AVX2 (checked by the caller) and len(x) >= len(y).
TEXT ·axpy32AVX2(SB), NOSPLIT, $0-56
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ y_base+32(FP), DI
	MOVQ y_len+40(FP), CX
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-32, BX
	JZ tail8
loop32:
	VMULPS (SI)(AX*4), Y0, Y1
	VMULPS 32(SI)(AX*4), Y0, Y2
	VMULPS 64(SI)(AX*4), Y0, Y3
	VMULPS 96(SI)(AX*4), Y0, Y4
	VADDPS (DI)(AX*4), Y1, Y1
	VADDPS 32(DI)(AX*4), Y2, Y2
	VADDPS 64(DI)(AX*4), Y3, Y3
	VADDPS 96(DI)(AX*4), Y4, Y4
	VMOVUPS Y1, (DI)(AX*4)
	VMOVUPS Y2, 32(DI)(AX*4)
	VMOVUPS Y3, 64(DI)(AX*4)
	VMOVUPS Y4, 96(DI)(AX*4)
	ADDQ $32, AX
	CMPQ AX, BX
	JL loop32
tail8:
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JGE tail1
loop8:
	VMULPS (SI)(AX*4), Y0, Y1
	VADDPS (DI)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, BX
	JL loop8
tail1:
	CMPQ AX, CX
	JGE done
loop1:
	VMULSS (SI)(AX*4), X0, X1
	VADDSS (DI)(AX*4), X1, X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	CMPQ AX, CX
	JL loop1
done:
	VZEROUPPER
	RET

// func axpySumSquaresAVX2(alpha float64, x, y []float64) float64
// axpyAVX2 (y[i] += alpha·x[i], products then sums) and Σ x_i² summed as
// gonum's DotUnitary sums Σ x_i·x_i: lane l of Y5 is s_l over the i ≡ l
// mod 4 of the whole blocks of four, the 1–3 remaining products go into
// s_0 in order, then (s_0 + s_2) + (s_1 + s_3). The sum is one chain of
// additions that waits on each one's latency; the axpy's loads, products
// and stores fill that wait. Requires AVX2 (checked by the caller) and
// len(x) >= len(y).
TEXT ·axpySumSquaresAVX2(SB), NOSPLIT, $0-64
	VBROADCASTSD alpha+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ y_base+32(FP), DI
	MOVQ y_len+40(FP), CX
	VXORPD Y5, Y5, Y5
	XORQ AX, AX
	MOVQ CX, BX
	ANDQ $-4, BX
	JZ ss_reduce
ss_loop4:
	VMOVUPD (SI)(AX*8), Y1
	VMULPD Y1, Y1, Y2
	VADDPD Y2, Y5, Y5
	VMULPD Y1, Y0, Y3
	VADDPD (DI)(AX*8), Y3, Y3
	VMOVUPD Y3, (DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, BX
	JL ss_loop4
ss_reduce:
	// X5 = (s_0, s_1), X6 = (s_2, s_3).
	VEXTRACTF128 $1, Y5, X6
	CMPQ AX, CX
	JGE ss_combine
ss_tail:
	VMOVSD (SI)(AX*8), X1
	VMULSD X1, X1, X2
	VADDSD X2, X5, X5 // keeps lane 1 (s_1)
	VMULSD X1, X0, X3
	VADDSD (DI)(AX*8), X3, X3
	VMOVSD X3, (DI)(AX*8)
	INCQ AX
	CMPQ AX, CX
	JL ss_tail
ss_combine:
	VADDPD X6, X5, X5
	VUNPCKHPD X5, X5, X6
	VADDSD X5, X6, X6
	VMOVSD X6, ret+56(FP)
	VZEROUPPER
	RET
