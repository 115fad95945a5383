#include "textflag.h"

// Elementwise float64 kernels, four values a vector; the callers finish
// the last n mod 4 values with their Go loops. Each kernel runs the
// instructions the compiler emits for its Go loop, lane by lane, so the
// bits agree on every input, NaNs included.

DATA sign64<>+0(SB)/8, $0x8000000000000000
GLOBL sign64<>(SB), RODATA|NOPTR, $8

// func fill64(dst *float64, n int, v float64)
//
// Sets the first n &^ 3 values of dst to v (setBias).
TEXT ·fill64(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $2, CX
	JZ fdone
	VBROADCASTSD v+16(FP), Y0
floop:
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ floop
fdone:
	VZEROUPPER
	RET

// func addConst64(dst *float64, n int, v float64)
//
// Adds v to the first n &^ 3 values of dst (addBias), dst's value the
// first operand, as in the compiled Go loop.
TEXT ·addConst64(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $2, CX
	JZ adone
	VBROADCASTSD v+16(FP), Y1
aloop:
	VMOVUPD (DI), Y0
	VADDPD Y1, Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ aloop
adone:
	VZEROUPPER
	RET

// func relu64(dst, src *float64, n int)
//
// dst = max(src, 0) on the first n &^ 3 values, as Go's max computes it
// (NaN in, NaN out; −0 out as +0): with s the sign bit,
// max(x, 0) = −(min(min(−x, −0), −x) | min(−x, −0)), MINPD returning its
// second operand on a NaN or on equal zeros.
TEXT ·relu64(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $2, CX
	JZ rdone
	VBROADCASTSD sign64<>(SB), Y1
rloop:
	VXORPD (SI), Y1, Y0
	VMOVUPD Y1, Y2
	VMOVUPD Y0, Y3
	VMINPD Y2, Y0, Y0
	VMOVUPD Y0, Y2
	VMINPD Y3, Y0, Y0
	VORPD Y2, Y0, Y0
	VXORPD Y1, Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ rloop
rdone:
	VZEROUPPER
	RET

// func reluMaskVec64(dst, src, y *float64, n int)
//
// reluMask64 on the first n &^ 3 values: dst = src & (−bits(y) >> 63),
// the shift arithmetic, which is 0 > −bits(y) as a signed comparison.
TEXT ·reluMaskVec64(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $2, CX
	JZ mdone
	VPXOR Y2, Y2, Y2
mloop:
	VPSUBQ (DX), Y2, Y0
	VPCMPGTQ Y0, Y2, Y0
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

// func sumRows4(steps int, x *float64, ld int, acc *[4][4]float64)
//
// The running sums of sum over the first 4·steps values of four rows of
// x, ld values apart, side by side: acc[r][j] = Σ x[r·ld + 4i + j] over i
// in order, from +0, the accumulator the first operand as in the
// compiled Go loop. Requires AVX, steps ≥ 1.
TEXT ·sumRows4(SB), NOSPLIT, $0-32
	MOVQ steps+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ ld+16(FP), BX
	SHLQ $3, BX
	MOVQ acc+24(FP), DI
	LEAQ (SI)(BX*2), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
sloop:
	VADDPD (SI), Y0, Y0
	VADDPD (SI)(BX*1), Y1, Y1
	VADDPD (DX), Y2, Y2
	VADDPD (DX)(BX*1), Y3, Y3
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ sloop
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET
