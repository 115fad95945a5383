#include "textflag.h"

// func combineAVX2(dst []float64, terms []Term[float64], off int)
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

	PCALIGN $64
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

	PCALIGN $64
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

	PCALIGN $64
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

// func combineAVX512(dst []float64, terms []Term[float64], off int)
//
// combineAVX2 on ZMM registers: Z0–Z7 hold 64 coordinates' partial sums
// while the terms are walked, then groups of eight (Z0), then single
// coordinates (X0). Each lane takes combineAVX2's operations with its
// operand order: VMULPD Coef·Vec, then VADDPD product + partial sum.
// Requires AVX-512F (checked by the caller).
TEXT ·combineAVX512(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ terms_base+24(FP), SI
	MOVQ terms_len+32(FP), DX
	MOVQ off+48(FP), R8
	SHLQ $5, DX // DX = bytes of terms
	SHLQ $3, R8 // R8 = byte offset of dst[0] in each Vec
	XORQ AX, AX // AX = i
	MOVQ CX, BX
	ANDQ $-64, BX
	JZ zgroup8

zgroup64:
	VXORPD Z0, Z0, Z0
	VXORPD Z1, Z1, Z1
	VXORPD Z2, Z2, Z2
	VXORPD Z3, Z3, Z3
	VXORPD Z4, Z4, Z4
	VXORPD Z5, Z5, Z5
	VXORPD Z6, Z6, Z6
	VXORPD Z7, Z7, Z7
	LEAQ (R8)(AX*8), R11 // R11 = byte offset of dst[i] in each Vec
	XORQ R9, R9 // R9 = byte offset of the term
	CMPQ R9, DX
	JGE zstore64

	PCALIGN $64
zterm64:
	VBROADCASTSD (SI)(R9*1), Z15
	MOVQ 8(SI)(R9*1), R10
	ADDQ R11, R10
	VMULPD (R10), Z15, Z8
	VADDPD Z0, Z8, Z0
	VMULPD 64(R10), Z15, Z9
	VADDPD Z1, Z9, Z1
	VMULPD 128(R10), Z15, Z10
	VADDPD Z2, Z10, Z2
	VMULPD 192(R10), Z15, Z11
	VADDPD Z3, Z11, Z3
	VMULPD 256(R10), Z15, Z8
	VADDPD Z4, Z8, Z4
	VMULPD 320(R10), Z15, Z9
	VADDPD Z5, Z9, Z5
	VMULPD 384(R10), Z15, Z10
	VADDPD Z6, Z10, Z6
	VMULPD 448(R10), Z15, Z11
	VADDPD Z7, Z11, Z7
	ADDQ $32, R9
	CMPQ R9, DX
	JL zterm64

zstore64:
	VMOVUPD Z0, (DI)(AX*8)
	VMOVUPD Z1, 64(DI)(AX*8)
	VMOVUPD Z2, 128(DI)(AX*8)
	VMOVUPD Z3, 192(DI)(AX*8)
	VMOVUPD Z4, 256(DI)(AX*8)
	VMOVUPD Z5, 320(DI)(AX*8)
	VMOVUPD Z6, 384(DI)(AX*8)
	VMOVUPD Z7, 448(DI)(AX*8)
	ADDQ $64, AX
	CMPQ AX, BX
	JL zgroup64

zgroup8:
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JGE zgroup1

zloop8:
	VXORPD Z0, Z0, Z0
	LEAQ (R8)(AX*8), R11
	XORQ R9, R9
	CMPQ R9, DX
	JGE zstore8

	PCALIGN $64
zterm8:
	VBROADCASTSD (SI)(R9*1), Z15
	MOVQ 8(SI)(R9*1), R10
	VMULPD (R10)(R11*1), Z15, Z8
	VADDPD Z0, Z8, Z0
	ADDQ $32, R9
	CMPQ R9, DX
	JL zterm8

zstore8:
	VMOVUPD Z0, (DI)(AX*8)
	ADDQ $8, AX
	CMPQ AX, BX
	JL zloop8

zgroup1:
	CMPQ AX, CX
	JGE zdone

zloop1:
	VXORPD X0, X0, X0
	LEAQ (R8)(AX*8), R11
	XORQ R9, R9
	CMPQ R9, DX
	JGE zstore1

	PCALIGN $64
zterm1:
	VMOVSD (SI)(R9*1), X15
	MOVQ 8(SI)(R9*1), R10
	VMULSD (R10)(R11*1), X15, X8
	VADDSD X0, X8, X0
	ADDQ $32, R9
	CMPQ R9, DX
	JL zterm1

zstore1:
	VMOVSD X0, (DI)(AX*8)
	INCQ AX
	CMPQ AX, CX
	JL zloop1

zdone:
	VZEROUPPER
	RET
