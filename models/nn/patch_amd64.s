#include "textflag.h"

// func patchRow5(nr int, dst, src *float64, runs *int)
//
// Copies nr runs of five values, run i from src + runs[i] to dst + 5i: a
// patch row of a convolution with 5-wide kernels (conv.im2rowDense), each
// run as one 32-byte and one 8-byte move. Requires AVX, nr ≥ 1.
TEXT ·patchRow5(SB), NOSPLIT, $0-32
	MOVQ nr+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ runs+24(FP), BX
loop:
	MOVQ (BX), AX
	VMOVUPD (SI)(AX*8), Y0
	VMOVSD 32(SI)(AX*8), X1
	VMOVUPD Y0, (DI)
	VMOVSD X1, 32(DI)
	ADDQ $8, BX
	ADDQ $40, DI
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET

// func copyRuns(n, w int, dst *float64, dstStride int, src *float64, srcStride int)
//
// Copies n runs of w values, run i from src + i·srcStride to
// dst + i·dstStride (strides in elements): four values a move, then one at
// a time. conv.im2colDense copies the rows of its patch matrices' first
// rows so, runs too short for memmove's call to pay. Requires AVX, n ≥ 1,
// w ≥ 1.
TEXT ·copyRuns(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), R8
	MOVQ dst+16(FP), DI
	MOVQ dstStride+24(FP), R9
	SHLQ $3, R9
	MOVQ src+32(FP), SI
	MOVQ srcStride+40(FP), R10
	SHLQ $3, R10
run:
	MOVQ R8, DX
	XORQ AX, AX
	CMPQ DX, $4
	JLT tail
quad:
	VMOVUPD (SI)(AX*8), Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ $4, AX
	SUBQ $4, DX
	CMPQ DX, $4
	JGE quad
tail:
	TESTQ DX, DX
	JZ next
one:
	VMOVSD (SI)(AX*8), X1
	VMOVSD X1, (DI)(AX*8)
	INCQ AX
	DECQ DX
	JNZ one
next:
	ADDQ R9, DI
	ADDQ R10, SI
	DECQ CX
	JNZ run
	VZEROUPPER
	RET

// func addRuns(n, w int, dst *float64, dstStride int, src *float64, srcStride int)
//
// Adds n runs of w values, run i of src + i·srcStride to dst + i·dstStride
// (strides in elements): each dst value takes one addition, as the loop
// of conv.col2imDense does, four values a vector. Requires AVX, n ≥ 1,
// w ≥ 1.
TEXT ·addRuns(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), R8
	MOVQ dst+16(FP), DI
	MOVQ dstStride+24(FP), R9
	SHLQ $3, R9
	MOVQ src+32(FP), SI
	MOVQ srcStride+40(FP), R10
	SHLQ $3, R10
arun:
	MOVQ R8, DX
	XORQ AX, AX
	CMPQ DX, $4
	JLT atail
aquad:
	VMOVUPD (DI)(AX*8), Y0
	VADDPD (SI)(AX*8), Y0, Y0
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ $4, AX
	SUBQ $4, DX
	CMPQ DX, $4
	JGE aquad
atail:
	TESTQ DX, DX
	JZ anext
aone:
	VMOVSD (DI)(AX*8), X1
	VADDSD (SI)(AX*8), X1, X1
	VMOVSD X1, (DI)(AX*8)
	INCQ AX
	DECQ DX
	JNZ aone
anext:
	ADDQ R9, DI
	ADDQ R10, SI
	DECQ CX
	JNZ arun
	VZEROUPPER
	RET
