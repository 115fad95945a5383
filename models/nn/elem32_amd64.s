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
