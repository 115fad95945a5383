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

// func normSqDev8x32(stride, n int, x *float32, mu *[8][4]float32, acc *[8][4]float32)
// mu holds each group's mean four times; per group, its acc gets
// (x − μ)², x − μ rounded, the accumulator the first operand.
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
	VMOVUPS (SI), X8
	VSUBPS 0(AX), X8, X8
	VMULPS X8, X8, X8
	VADDPS X8, X0, X0
	VMOVUPS (SI)(R8*1), X9
	VSUBPS 16(AX), X9, X9
	VMULPS X9, X9, X9
	VADDPS X9, X1, X1
	VMOVUPS (SI)(R8*2), X10
	VSUBPS 32(AX), X10, X10
	VMULPS X10, X10, X10
	VADDPS X10, X2, X2
	VMOVUPS (SI)(R9*1), X11
	VSUBPS 48(AX), X11, X11
	VMULPS X11, X11, X11
	VADDPS X11, X3, X3
	VMOVUPS (SI)(R8*4), X12
	VSUBPS 64(AX), X12, X12
	VMULPS X12, X12, X12
	VADDPS X12, X4, X4
	VMOVUPS (SI)(R10*1), X13
	VSUBPS 80(AX), X13, X13
	VMULPS X13, X13, X13
	VADDPS X13, X5, X5
	VMOVUPS (SI)(R9*2), X14
	VSUBPS 96(AX), X14, X14
	VMULPS X14, X14, X14
	VADDPS X14, X6, X6
	VMOVUPS (SI)(R11*1), X15
	VSUBPS 112(AX), X15, X15
	VMULPS X15, X15, X15
	VADDPS X15, X7, X7
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
