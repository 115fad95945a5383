#include "textflag.h"

// Elementwise float32 kernels, eight values a vector; the callers finish
// the last n mod 8 values with their Go loops. Each kernel runs the
// instructions the compiler emits for its Go loop, lane by lane, so the
// bits agree on every input, NaNs included.

DATA sign32<>+0(SB)/4, $0x80000000
GLOBL sign32<>(SB), RODATA|NOPTR, $4

// func fill32(dst *float32, n int, v float32)
//
// Sets the first n &^ 7 values of dst to v (setBias).
TEXT ·fill32(SB), NOSPLIT, $0-20
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ fdone
	VBROADCASTSS v+16(FP), Y0
floop:
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ floop
fdone:
	VZEROUPPER
	RET

// func addConst32(dst *float32, n int, v float32)
//
// Adds v to the first n &^ 7 values of dst (addBias), dst's value the
// first operand, as in the compiled Go loop.
TEXT ·addConst32(SB), NOSPLIT, $0-20
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ adone
	VBROADCASTSS v+16(FP), Y1
aloop:
	VMOVUPS (DI), Y0
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ aloop
adone:
	VZEROUPPER
	RET

// func relu32(dst, src *float32, n int)
//
// dst = max(src, 0) on the first n &^ 7 values, as Go's max computes it
// (NaN in, NaN out; −0 out as +0): with s the sign bit,
// max(x, 0) = −(min(min(−x, −0), −x) | min(−x, −0)), MINPS returning its
// second operand on a NaN or on equal zeros.
TEXT ·relu32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ rdone
	VBROADCASTSS sign32<>(SB), Y1
rloop:
	VXORPS (SI), Y1, Y0
	VMOVUPS Y1, Y2
	VMOVUPS Y0, Y3
	VMINPS Y2, Y0, Y0
	VMOVUPS Y0, Y2
	VMINPS Y3, Y0, Y0
	VORPS Y2, Y0, Y0
	VXORPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ rloop
rdone:
	VZEROUPPER
	RET

// func reluMaskVec32(dst, src, y *float32, n int)
//
// reluMask32 on the first n &^ 7 values: dst = src & (−bits(y) >> 31),
// the shift arithmetic.
TEXT ·reluMaskVec32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ mdone
	VPXOR Y2, Y2, Y2
mloop:
	VPSUBD (DX), Y2, Y0
	VPSRAD $31, Y0, Y0
	VPAND (SI), Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ mloop
mdone:
	VZEROUPPER
	RET

// func l2GradVec32(dst, x *float32, n int, l2 float32, acc *[8]float64)
//
// l2Grad32 on the first n &^ 7 values: dst = l2·x + dst and
// acc[j] = float64(x_i)² + acc[j] over i ≡ j mod 8, in order of i (the
// compiled Go loop's operand orders).
TEXT ·l2GradVec32(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ acc+32(FP), DX
	SHRQ $3, CX
	JZ gdone
	VBROADCASTSS l2+24(FP), Y15
	VMOVUPD (DX), Y10
	VMOVUPD 32(DX), Y11
gloop:
	VMOVUPS (SI), Y0
	VMULPS Y0, Y15, Y1
	VADDPS (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	VCVTPS2PD (SI), Y2
	VCVTPS2PD 16(SI), Y3
	VMULPD Y2, Y2, Y2
	VMULPD Y3, Y3, Y3
	VADDPD Y10, Y2, Y10
	VADDPD Y11, Y3, Y11
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ gloop
	VMOVUPD Y10, (DX)
	VMOVUPD Y11, 32(DX)
gdone:
	VZEROUPPER
	RET

// func sumRows4x32(steps int, x *float32, ld int, acc *[4][4]float32)
//
// sumRows4 for float32: the running sums of sum over the first 4·steps
// values of four rows of x, ld values apart, side by side, one row's four
// sums a 128-bit vector: acc[r][j] = Σ x[r·ld + 4i + j] over i in order,
// from +0, the accumulator the first operand as in the compiled Go loop.
// Requires AVX, steps ≥ 1.
TEXT ·sumRows4x32(SB), NOSPLIT, $0-32
	MOVQ steps+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ ld+16(FP), BX
	SHLQ $2, BX
	MOVQ acc+24(FP), DI
	LEAQ (SI)(BX*2), DX
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
sloop:
	VADDPS (SI), X0, X0
	VADDPS (SI)(BX*1), X1, X1
	VADDPS (DX), X2, X2
	VADDPS (DX)(BX*1), X3, X3
	ADDQ $16, SI
	ADDQ $16, DX
	DECQ CX
	JNZ sloop
	VMOVUPS X0, (DI)
	VMOVUPS X1, 16(DI)
	VMOVUPS X2, 32(DI)
	VMOVUPS X3, 48(DI)
	VZEROUPPER
	RET
