#include "textflag.h"

// func combine32AVX2(dst []float32, terms []Term[float32], off int)
//
// combineAVX2 in float32, with its operations and operand order in single
// precision: VMULPS Coef·Vec, then VADDPS product + partial sum, from +0
// in term order, never FMA. Y0–Y7 hold 64 coordinates' partial sums while
// the terms are walked; then groups of eight (Y0), then single coordinates
// (X0). Requires AVX2 (checked by the caller) and every Vec holding
// off+len(dst) elements (checked by Combine). A Term[float32] is 32 bytes
// like a Term[float64]: Coef at 0 (4 bytes, then padding), Vec's base at 8.
TEXT ·combine32AVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ terms_base+24(FP), SI
	MOVQ terms_len+32(FP), DX
	MOVQ off+48(FP), R8
	SHLQ $5, DX // DX = bytes of terms
	SHLQ $2, R8 // R8 = byte offset of dst[0] in each Vec
	XORQ AX, AX // AX = i
	MOVQ CX, BX
	ANDQ $-64, BX
	JZ group8

group64:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	LEAQ (R8)(AX*4), R11 // R11 = byte offset of dst[i] in each Vec
	XORQ R9, R9 // R9 = byte offset of the term
	CMPQ R9, DX
	JGE store64

	PCALIGN $64
term64:
	VBROADCASTSS (SI)(R9*1), Y15
	MOVQ 8(SI)(R9*1), R10
	ADDQ R11, R10
	VMULPS (R10), Y15, Y8
	VADDPS Y0, Y8, Y0
	VMULPS 32(R10), Y15, Y9
	VADDPS Y1, Y9, Y1
	VMULPS 64(R10), Y15, Y10
	VADDPS Y2, Y10, Y2
	VMULPS 96(R10), Y15, Y11
	VADDPS Y3, Y11, Y3
	VMULPS 128(R10), Y15, Y8
	VADDPS Y4, Y8, Y4
	VMULPS 160(R10), Y15, Y9
	VADDPS Y5, Y9, Y5
	VMULPS 192(R10), Y15, Y10
	VADDPS Y6, Y10, Y6
	VMULPS 224(R10), Y15, Y11
	VADDPS Y7, Y11, Y7
	ADDQ $32, R9
	CMPQ R9, DX
	JL term64

store64:
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	VMOVUPS Y4, 128(DI)(AX*4)
	VMOVUPS Y5, 160(DI)(AX*4)
	VMOVUPS Y6, 192(DI)(AX*4)
	VMOVUPS Y7, 224(DI)(AX*4)
	ADDQ $64, AX
	CMPQ AX, BX
	JL group64

group8:
	MOVQ CX, BX
	ANDQ $-8, BX
	CMPQ AX, BX
	JGE group1

loop8:
	VXORPS Y0, Y0, Y0
	LEAQ (R8)(AX*4), R11
	XORQ R9, R9
	CMPQ R9, DX
	JGE store8

	PCALIGN $64
term8:
	VBROADCASTSS (SI)(R9*1), Y15
	MOVQ 8(SI)(R9*1), R10
	VMULPS (R10)(R11*1), Y15, Y8
	VADDPS Y0, Y8, Y0
	ADDQ $32, R9
	CMPQ R9, DX
	JL term8

store8:
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, BX
	JL loop8

group1:
	CMPQ AX, CX
	JGE done

loop1:
	VXORPS X0, X0, X0
	LEAQ (R8)(AX*4), R11
	XORQ R9, R9
	CMPQ R9, DX
	JGE store1

	PCALIGN $64
term1:
	VMOVSS (SI)(R9*1), X15
	MOVQ 8(SI)(R9*1), R10
	VMULSS (R10)(R11*1), X15, X8
	VADDSS X0, X8, X0
	ADDQ $32, R9
	CMPQ R9, DX
	JL term1

store1:
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	CMPQ AX, CX
	JL loop1

done:
	VZEROUPPER
	RET

// func combine32AVX512(dst []float32, terms []Term[float32], off int)
//
// combine32AVX2 on ZMM registers: Z0–Z7 hold 128 coordinates' partial sums
// while the terms are walked, then groups of sixteen (Z0), then single
// coordinates (X0), each lane with combine32AVX2's operations in its
// order. Requires AVX-512F (checked by the caller).
TEXT ·combine32AVX512(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ terms_base+24(FP), SI
	MOVQ terms_len+32(FP), DX
	MOVQ off+48(FP), R8
	SHLQ $5, DX // DX = bytes of terms
	SHLQ $2, R8 // R8 = byte offset of dst[0] in each Vec
	XORQ AX, AX // AX = i
	MOVQ CX, BX
	ANDQ $-128, BX
	JZ zgroup16

zgroup128:
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	LEAQ (R8)(AX*4), R11 // R11 = byte offset of dst[i] in each Vec
	XORQ R9, R9 // R9 = byte offset of the term
	CMPQ R9, DX
	JGE zstore128

	PCALIGN $64
zterm128:
	VBROADCASTSS (SI)(R9*1), Z15
	MOVQ 8(SI)(R9*1), R10
	ADDQ R11, R10
	VMULPS (R10), Z15, Z8
	VADDPS Z0, Z8, Z0
	VMULPS 64(R10), Z15, Z9
	VADDPS Z1, Z9, Z1
	VMULPS 128(R10), Z15, Z10
	VADDPS Z2, Z10, Z2
	VMULPS 192(R10), Z15, Z11
	VADDPS Z3, Z11, Z3
	VMULPS 256(R10), Z15, Z8
	VADDPS Z4, Z8, Z4
	VMULPS 320(R10), Z15, Z9
	VADDPS Z5, Z9, Z5
	VMULPS 384(R10), Z15, Z10
	VADDPS Z6, Z10, Z6
	VMULPS 448(R10), Z15, Z11
	VADDPS Z7, Z11, Z7
	ADDQ $32, R9
	CMPQ R9, DX
	JL zterm128

zstore128:
	VMOVUPS Z0, (DI)(AX*4)
	VMOVUPS Z1, 64(DI)(AX*4)
	VMOVUPS Z2, 128(DI)(AX*4)
	VMOVUPS Z3, 192(DI)(AX*4)
	VMOVUPS Z4, 256(DI)(AX*4)
	VMOVUPS Z5, 320(DI)(AX*4)
	VMOVUPS Z6, 384(DI)(AX*4)
	VMOVUPS Z7, 448(DI)(AX*4)
	ADDQ $128, AX
	CMPQ AX, BX
	JL zgroup128

zgroup16:
	MOVQ CX, BX
	ANDQ $-16, BX
	CMPQ AX, BX
	JGE zgroup1

zloop16:
	VXORPS Z0, Z0, Z0
	LEAQ (R8)(AX*4), R11
	XORQ R9, R9
	CMPQ R9, DX
	JGE zstore16

	PCALIGN $64
zterm16:
	VBROADCASTSS (SI)(R9*1), Z15
	MOVQ 8(SI)(R9*1), R10
	VMULPS (R10)(R11*1), Z15, Z8
	VADDPS Z0, Z8, Z0
	ADDQ $32, R9
	CMPQ R9, DX
	JL zterm16

zstore16:
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, BX
	JL zloop16

zgroup1:
	CMPQ AX, CX
	JGE zdone

zloop1:
	VXORPS X0, X0, X0
	LEAQ (R8)(AX*4), R11
	XORQ R9, R9
	CMPQ R9, DX
	JGE zstore1

	PCALIGN $64
zterm1:
	VMOVSS (SI)(R9*1), X15
	MOVQ 8(SI)(R9*1), R10
	VMULSS (R10)(R11*1), X15, X8
	VADDSS X0, X8, X0
	ADDQ $32, R9
	CMPQ R9, DX
	JL zterm1

zstore1:
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	CMPQ AX, CX
	JL zloop1

zdone:
	VZEROUPPER
	RET
