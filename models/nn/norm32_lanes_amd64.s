#include "textflag.h"

// The float32 group norm's forward statistics over eight groups at once
// (norm32_lanes.go): normSum8 and normSqDev8 of norm_lanes_amd64.s in
// float32, each group's four interleaved partial sums (see sum) in one
// 128-bit register, every lane adding its own values in the scalar loops'
// order with the accumulator the first operand, as they do. stride is the
// distance in bytes between the groups' values; n ≥ 1 steps of four
// values per group. Requires AVX.

#define STRIDES \
	MOVQ stride+0(FP), R8; \
	LEAQ (R8)(R8*2), R9; \
	LEAQ (R8)(R8*4), R10; \
	LEAQ (R9)(R8*4), R11

// func normSum8x32(stride, n int, x *float32, acc *[8][4]float32)
TEXT ·normSum8x32(SB), NOSPLIT, $0-32
	STRIDES
	MOVQ n+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ acc+24(FP), DX
	VMOVUPS 0(DX), X0
	VMOVUPS 16(DX), X1
	VMOVUPS 32(DX), X2
	VMOVUPS 48(DX), X3
	VMOVUPS 64(DX), X4
	VMOVUPS 80(DX), X5
	VMOVUPS 96(DX), X6
	VMOVUPS 112(DX), X7
sum32Loop:
	VADDPS (SI), X0, X0
	VADDPS (SI)(R8*1), X1, X1
	VADDPS (SI)(R8*2), X2, X2
	VADDPS (SI)(R9*1), X3, X3
	VADDPS (SI)(R8*4), X4, X4
	VADDPS (SI)(R10*1), X5, X5
	VADDPS (SI)(R9*2), X6, X6
	VADDPS (SI)(R11*1), X7, X7
	ADDQ $16, SI
	DECQ CX
	JNZ sum32Loop
	VMOVUPS X0, 0(DX)
	VMOVUPS X1, 16(DX)
	VMOVUPS X2, 32(DX)
	VMOVUPS X3, 48(DX)
	VMOVUPS X4, 64(DX)
	VMOVUPS X5, 80(DX)
	VMOVUPS X6, 96(DX)
	VMOVUPS X7, 112(DX)
	VZEROUPPER
	RET

// SQDEV32 adds (x − μ)² of group j (its values at ADDR, μ at MU) to ACC.
#define SQDEV32(ADDR, MU, ACC, T) \
	VMOVUPS ADDR, T; \
	VSUBPS MU, T, T; \
	VMULPS T, T, T; \
	VADDPS T, ACC, ACC

// func normSqDev8x32(stride, n int, x *float32, mu *[8][4]float32, acc *[8][4]float32)
// mu holds each group's mean four times.
TEXT ·normSqDev8x32(SB), NOSPLIT, $0-40
	STRIDES
	MOVQ n+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ mu+24(FP), AX
	MOVQ acc+32(FP), DX
	VMOVUPS 0(DX), X0
	VMOVUPS 16(DX), X1
	VMOVUPS 32(DX), X2
	VMOVUPS 48(DX), X3
	VMOVUPS 64(DX), X4
	VMOVUPS 80(DX), X5
	VMOVUPS 96(DX), X6
	VMOVUPS 112(DX), X7
sq32Loop:
	SQDEV32((SI), 0(AX), X0, X8)
	SQDEV32((SI)(R8*1), 16(AX), X1, X9)
	SQDEV32((SI)(R8*2), 32(AX), X2, X10)
	SQDEV32((SI)(R9*1), 48(AX), X3, X11)
	SQDEV32((SI)(R8*4), 64(AX), X4, X12)
	SQDEV32((SI)(R10*1), 80(AX), X5, X13)
	SQDEV32((SI)(R9*2), 96(AX), X6, X14)
	SQDEV32((SI)(R11*1), 112(AX), X7, X15)
	ADDQ $16, SI
	DECQ CX
	JNZ sq32Loop
	VMOVUPS X0, 0(DX)
	VMOVUPS X1, 16(DX)
	VMOVUPS X2, 32(DX)
	VMOVUPS X3, 48(DX)
	VMOVUPS X4, 64(DX)
	VMOVUPS X5, 80(DX)
	VMOVUPS X6, 96(DX)
	VMOVUPS X7, 112(DX)
	VZEROUPPER
	RET
