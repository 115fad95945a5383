#include "textflag.h"

// The float32 forms of patch_amd64.s's kernels. They only move values or
// add one value to each destination, lane by lane (VADDPS rounds each lane
// as the Go loop's float32 addition does), so they give the Go loops' bits.

// func patchRows32(kw, nox, nr int, dst *float32, ld int, src *float32, runs *int)
//
// Writes the patch rows of nox consecutive output positions of a
// convolution with 3- or 5-wide kernels (conv.im2rowDense): for position
// t, the nr runs of kw values, run i from src + t + runs[i], to
// dst + t·ld + kw·i. Every run but a row's last is one 16-byte (kw = 3) or
// 32-byte (kw = 5) move, whose values past the run the next run
// overwrites and whose source lies before the last run's end; the last run
// of a row is an exact 8+4- or 16+4-byte move. Requires AVX, kw ∈ {3, 5},
// nox ≥ 1, nr ≥ 1, runs[i+1] ≥ runs[i] + kw.
TEXT ·patchRows32(SB), NOSPLIT, $0-56
	MOVQ kw+0(FP), DX
	MOVQ nox+8(FP), R11
	MOVQ dst+24(FP), DI
	MOVQ ld+32(FP), R9
	SHLQ $2, R9
	MOVQ src+40(FP), SI
	CMPQ DX, $5
	JEQ pos5
pos3:
	MOVQ nr+16(FP), CX
	MOVQ runs+48(FP), BX
	MOVQ DI, R8
	DECQ CX
	JZ last3
run3:
	MOVQ (BX), AX
	VMOVUPS (SI)(AX*4), X0
	VMOVUPS X0, (R8)
	ADDQ $8, BX
	ADDQ $12, R8
	DECQ CX
	JNZ run3
last3:
	MOVQ (BX), AX
	VMOVSD (SI)(AX*4), X0
	VMOVSS 8(SI)(AX*4), X1
	VMOVSD X0, (R8)
	VMOVSS X1, 8(R8)
	ADDQ R9, DI
	ADDQ $4, SI
	DECQ R11
	JNZ pos3
	VZEROUPPER
	RET
pos5:
	MOVQ nr+16(FP), CX
	MOVQ runs+48(FP), BX
	MOVQ DI, R8
	DECQ CX
	JZ last5
run5:
	MOVQ (BX), AX
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS Y0, (R8)
	ADDQ $8, BX
	ADDQ $20, R8
	DECQ CX
	JNZ run5
last5:
	MOVQ (BX), AX
	VMOVUPS (SI)(AX*4), X0
	VMOVSS 16(SI)(AX*4), X1
	VMOVUPS X0, (R8)
	VMOVSS X1, 16(R8)
	ADDQ R9, DI
	ADDQ $4, SI
	DECQ R11
	JNZ pos5
	VZEROUPPER
	RET

// func copyRuns32(n, w int, dst *float32, dstStride int, src *float32, srcStride int)
//
// Copies n runs of w values, run i from src + i·srcStride to
// dst + i·dstStride (strides in elements): eight values a move, then four,
// then one at a time (conv.im2colDense). Requires AVX, n ≥ 1, w ≥ 1.
TEXT ·copyRuns32(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), R8
	MOVQ dst+16(FP), DI
	MOVQ dstStride+24(FP), R9
	SHLQ $2, R9
	MOVQ src+32(FP), SI
	MOVQ srcStride+40(FP), R10
	SHLQ $2, R10
	// The row loop runs once per patch row: aligned, its speed does not
	// depend on where the linker happens to place the function.
	PCALIGN $32
crun:
	MOVQ R8, DX
	XORQ AX, AX
	CMPQ DX, $8
	JLT cfour
coct:
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	SUBQ $8, DX
	CMPQ DX, $8
	JGE coct
cfour:
	CMPQ DX, $4
	JLT ctail
	VMOVUPS (SI)(AX*4), X0
	VMOVUPS X0, (DI)(AX*4)
	ADDQ $4, AX
	SUBQ $4, DX
ctail:
	TESTQ DX, DX
	JZ cnext
cone:
	VMOVSS (SI)(AX*4), X1
	VMOVSS X1, (DI)(AX*4)
	INCQ AX
	DECQ DX
	JNZ cone
cnext:
	ADDQ R9, DI
	ADDQ R10, SI
	DECQ CX
	JNZ crun
	VZEROUPPER
	RET

// func addRuns32(n, w int, dst *float32, dstStride int, src *float32, srcStride int)
//
// Adds n runs of w values, run i of src + i·srcStride to dst + i·dstStride
// (strides in elements): each dst value takes one addition, as in the loop
// of conv.col2imDense, eight values a vector, then four, then one at a
// time. The destination is the first operand, as in the Go loop's
// compiled addition: when both values are NaNs, the result carries the
// destination's payload there too. Requires AVX, n ≥ 1, w ≥ 1.
TEXT ·addRuns32(SB), NOSPLIT, $0-48
	MOVQ n+0(FP), CX
	MOVQ w+8(FP), R8
	MOVQ dst+16(FP), DI
	MOVQ dstStride+24(FP), R9
	SHLQ $2, R9
	MOVQ src+32(FP), SI
	MOVQ srcStride+40(FP), R10
	SHLQ $2, R10
	PCALIGN $32
arun:
	MOVQ R8, DX
	XORQ AX, AX
	CMPQ DX, $8
	JLT afour
aoct:
	VMOVUPS (DI)(AX*4), Y0
	VADDPS (SI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	SUBQ $8, DX
	CMPQ DX, $8
	JGE aoct
afour:
	CMPQ DX, $4
	JLT atail
	VMOVUPS (DI)(AX*4), X0
	VADDPS (SI)(AX*4), X0, X0
	VMOVUPS X0, (DI)(AX*4)
	ADDQ $4, AX
	SUBQ $4, DX
atail:
	TESTQ DX, DX
	JZ anext
aone:
	VMOVSS (DI)(AX*4), X1
	VADDSS (SI)(AX*4), X1, X1
	VMOVSS X1, (DI)(AX*4)
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
