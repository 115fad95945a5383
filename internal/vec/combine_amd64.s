#include "textflag.h"

// func combineAVX2(dst []float64, terms []Term, off int)
//
// dst[i] = Σ_t terms[t].Coef·terms[t].Vec[off+i], each coordinate summed
// from +0 in term order, VMULPD then VADDPD (never FMA), with the operands
// in axpyAVX2's order: the product is Coef·Vec (Coef the first source),
// the sum product + partial sum (the product the first source), so even NaN
// payloads are axpyAVX2's. Y0–Y7 hold 32 coordinates' partial sums while
// the terms are walked; then groups of four (Y0), then single coordinates
// (X0). Requires AVX2 (checked by the caller) and every Vec holding
// off+len(dst) elements (checked by Combine). A Term is 32 bytes: Coef at
// 0, Vec's base at 8.
TEXT ·combineAVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ terms_base+24(FP), SI
	MOVQ terms_len+32(FP), DX
	MOVQ off+48(FP), R8
	SHLQ $5, DX // DX = bytes of terms
	SHLQ $3, R8 // R8 = byte offset of dst[0] in each Vec
	XORQ AX, AX // AX = i
	MOVQ CX, BX
	ANDQ $-32, BX
	JZ group4

group32:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	LEAQ (R8)(AX*8), R11 // R11 = byte offset of dst[i] in each Vec
	XORQ R9, R9 // R9 = byte offset of the term
	CMPQ R9, DX
	JGE store32

term32:
	VBROADCASTSD (SI)(R9*1), Y15
	MOVQ 8(SI)(R9*1), R10
	ADDQ R11, R10
	VMULPD (R10), Y15, Y8
	VADDPD Y0, Y8, Y0
	VMULPD 32(R10), Y15, Y9
	VADDPD Y1, Y9, Y1
	VMULPD 64(R10), Y15, Y10
	VADDPD Y2, Y10, Y2
	VMULPD 96(R10), Y15, Y11
	VADDPD Y3, Y11, Y3
	VMULPD 128(R10), Y15, Y8
	VADDPD Y4, Y8, Y4
	VMULPD 160(R10), Y15, Y9
	VADDPD Y5, Y9, Y5
	VMULPD 192(R10), Y15, Y10
	VADDPD Y6, Y10, Y6
	VMULPD 224(R10), Y15, Y11
	VADDPD Y7, Y11, Y7
	ADDQ $32, R9
	CMPQ R9, DX
	JL term32

store32:
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	VMOVUPD Y4, 128(DI)(AX*8)
	VMOVUPD Y5, 160(DI)(AX*8)
	VMOVUPD Y6, 192(DI)(AX*8)
	VMOVUPD Y7, 224(DI)(AX*8)
	ADDQ $32, AX
	CMPQ AX, BX
	JL group32

group4:
	MOVQ CX, BX
	ANDQ $-4, BX
	CMPQ AX, BX
	JGE group1

loop4:
	VXORPD Y0, Y0, Y0
	LEAQ (R8)(AX*8), R11
	XORQ R9, R9
	CMPQ R9, DX
	JGE store4

term4:
	VBROADCASTSD (SI)(R9*1), Y15
	MOVQ 8(SI)(R9*1), R10
	VMULPD (R10)(R11*1), Y15, Y8
	VADDPD Y0, Y8, Y0
	ADDQ $32, R9
	CMPQ R9, DX
	JL term4

store4:
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, BX
	JL loop4

group1:
	CMPQ AX, CX
	JGE done

loop1:
	VXORPD X0, X0, X0
	LEAQ (R8)(AX*8), R11
	XORQ R9, R9
	CMPQ R9, DX
	JGE store1

term1:
	VMOVSD (SI)(R9*1), X15
	MOVQ 8(SI)(R9*1), R10
	VMULSD (R10)(R11*1), X15, X8
	VADDSD X0, X8, X0
	ADDQ $32, R9
	CMPQ R9, DX
	JL term1

store1:
	VMOVSD X0, (DI)(AX*8)
	INCQ AX
	CMPQ AX, CX
	JL loop1

done:
	VZEROUPPER
	RET
