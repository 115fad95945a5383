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

// TRANSPOSE32 loads eight values of each group from O(B) and stores them as
// eight rows at S(R13): row k holds value k of groups 0..7. Y0..Y11 are
// scratch.
#define TRANSPOSE32(O, B, S) \
	VMOVUPS O(B), Y0; \
	VMOVUPS O(B)(R8*1), Y1; \
	VMOVUPS O(B)(R8*2), Y2; \
	VMOVUPS O(B)(R9*1), Y3; \
	VMOVUPS O(B)(R8*4), Y4; \
	VMOVUPS O(B)(R10*1), Y5; \
	VMOVUPS O(B)(R9*2), Y6; \
	VMOVUPS O(B)(R11*1), Y7; \
	VUNPCKLPS Y1, Y0, Y8; \
	VUNPCKHPS Y1, Y0, Y9; \
	VUNPCKLPS Y3, Y2, Y10; \
	VUNPCKHPS Y3, Y2, Y11; \
	VSHUFPS $0x44, Y10, Y8, Y0; \
	VSHUFPS $0xEE, Y10, Y8, Y1; \
	VSHUFPS $0x44, Y11, Y9, Y2; \
	VSHUFPS $0xEE, Y11, Y9, Y3; \
	VUNPCKLPS Y5, Y4, Y8; \
	VUNPCKHPS Y5, Y4, Y9; \
	VUNPCKLPS Y7, Y6, Y10; \
	VUNPCKHPS Y7, Y6, Y11; \
	VSHUFPS $0x44, Y10, Y8, Y4; \
	VSHUFPS $0xEE, Y10, Y8, Y5; \
	VSHUFPS $0x44, Y11, Y9, Y6; \
	VSHUFPS $0xEE, Y11, Y9, Y7; \
	VPERM2F128 $0x20, Y4, Y0, Y8; \
	VPERM2F128 $0x31, Y4, Y0, Y9; \
	VMOVAPS Y8, S(R13); \
	VMOVAPS Y9, (S+128)(R13); \
	VPERM2F128 $0x20, Y5, Y1, Y8; \
	VPERM2F128 $0x31, Y5, Y1, Y9; \
	VMOVAPS Y8, (S+32)(R13); \
	VMOVAPS Y9, (S+160)(R13); \
	VPERM2F128 $0x20, Y6, Y2, Y8; \
	VPERM2F128 $0x31, Y6, Y2, Y9; \
	VMOVAPS Y8, (S+64)(R13); \
	VMOVAPS Y9, (S+192)(R13); \
	VPERM2F128 $0x20, Y7, Y3, Y8; \
	VPERM2F128 $0x31, Y7, Y3, Y9; \
	VMOVAPS Y8, (S+96)(R13); \
	VMOVAPS Y9, (S+224)(R13)

// RFWD32STEP: value K of each group, rx (row at 32K) and x (at 256+32K):
//   x̂ = (x − μ)·s; sr += rx; sxr += x̂·rx
// with the operands in rforwardSums' compiled order (x̂ the first factor,
// the accumulators the first addends).
#define RFWD32STEP(K) \
	VMOVAPS (256+32*K)(R13), Y0; \
	VMOVAPS (32*K)(R13), Y1; \
	VSUBPS Y14, Y0, Y0; \
	VMULPS Y15, Y0, Y0; \
	VADDPS Y1, Y12, Y12; \
	VMULPS Y1, Y0, Y2; \
	VADDPS Y2, Y13, Y13

#define PREFETCH32(B) \
	PREFETCHT0 1024(B); \
	PREFETCHT0 1024(B)(R8*1); \
	PREFETCHT0 1024(B)(R8*2); \
	PREFETCHT0 1024(B)(R9*1); \
	PREFETCHT0 1024(B)(R8*4); \
	PREFETCHT0 1024(B)(R10*1); \
	PREFETCHT0 1024(B)(R9*2); \
	PREFETCHT0 1024(B)(R11*1)

// func normRFwdSums8x32(scr *float32, stride, n int, rx, x *float32, c *[2][8]float32, acc *[2][8]float32)
//
// normRFwdSums8 for float32 with 256-bit vectors: n ≥ 1 steps of sixteen
// values per group (one cache line of each group and array, transposed
// eight values at a time into the scratch of 512 + 31 bytes); c holds μ
// and s per lane, acc Σ rx and Σ x̂ rx. Requires AVX.
TEXT ·normRFwdSums8x32(SB), NOSPLIT, $0-56
	MOVQ scr+0(FP), R13
	ADDQ $31, R13
	ANDQ $-32, R13
	MOVQ stride+8(FP), R8
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
	MOVQ n+16(FP), CX
	MOVQ rx+24(FP), SI
	MOVQ x+32(FP), DI
	MOVQ c+40(FP), AX
	MOVQ acc+48(FP), DX
	VMOVUPS 0(AX), Y14
	VMOVUPS 32(AX), Y15
	VMOVUPS 0(DX), Y12
	VMOVUPS 32(DX), Y13
rfwd32Loop:
	PREFETCH32(SI)
	PREFETCH32(DI)
	TRANSPOSE32(0, SI, 0)
	TRANSPOSE32(0, DI, 256)
	RFWD32STEP(0)
	RFWD32STEP(1)
	RFWD32STEP(2)
	RFWD32STEP(3)
	RFWD32STEP(4)
	RFWD32STEP(5)
	RFWD32STEP(6)
	RFWD32STEP(7)
	TRANSPOSE32(32, SI, 0)
	TRANSPOSE32(32, DI, 256)
	RFWD32STEP(0)
	RFWD32STEP(1)
	RFWD32STEP(2)
	RFWD32STEP(3)
	RFWD32STEP(4)
	RFWD32STEP(5)
	RFWD32STEP(6)
	RFWD32STEP(7)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ rfwd32Loop
	VMOVUPS Y12, 0(DX)
	VMOVUPS Y13, 32(DX)
	VZEROUPPER
	RET

// RBACK32STEP: value K of each group, rgy (row at 32K), gy (256+32K),
// x̂ (512+32K) and R{x̂} (768+32K), in the operand order of rbackward's
// compiled loop (the accumulators the first addends):
//   sg += x̂·rgy + R{x̂}·gy; sb += rgy; h = gy·γ; R{h} = gy·u_γ + rgy·γ;
//   sh += h; sxh += x̂·h; srxh += R{x̂}·h; srh += R{h}; sxrh += x̂·R{h}
// Y16..Y22: sg, sb, sh, sxh, srxh, srh, sxrh; γ and u_γ at 0(AX), 32(AX).
#define RBACK32STEP(K) \
	VMOVAPS (32*K)(R13), Y0; \
	VMOVAPS (256+32*K)(R13), Y1; \
	VMOVAPS (512+32*K)(R13), Y2; \
	VMOVAPS (768+32*K)(R13), Y3; \
	VMULPS Y0, Y2, Y4; \
	VMULPS Y1, Y3, Y5; \
	VADDPS Y5, Y4, Y4; \
	VADDPS Y4, Y16, Y16; \
	VADDPS Y0, Y17, Y17; \
	VMULPS 0(AX), Y1, Y4; \
	VMULPS 32(AX), Y1, Y5; \
	VMULPS 0(AX), Y0, Y6; \
	VADDPS Y6, Y5, Y5; \
	VADDPS Y4, Y18, Y18; \
	VMULPS Y4, Y2, Y6; \
	VADDPS Y6, Y19, Y19; \
	VMULPS Y4, Y3, Y6; \
	VADDPS Y6, Y20, Y20; \
	VADDPS Y5, Y21, Y21; \
	VMULPS Y5, Y2, Y6; \
	VADDPS Y6, Y22, Y22

// func normRBackSums8x32(scr *float32, stride, n int, rgy, gy, xh, rxh *float32, c *[2][8]float32, acc *[7][8]float32)
//
// The sums of rbackward's first sweep over n ≥ 1 steps of eight values of
// one channel plane of eight groups side by side, transposed into the
// scratch of 1024 + 31 bytes; c holds γ and u_γ per lane, acc the seven
// sums (above), read and written back. Requires AVX-512 (for the
// registers Y16..Y22).
TEXT ·normRBackSums8x32(SB), NOSPLIT, $0-72
	MOVQ scr+0(FP), R13
	ADDQ $31, R13
	ANDQ $-32, R13
	MOVQ stride+8(FP), R8
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
	MOVQ n+16(FP), CX
	MOVQ rgy+24(FP), SI
	MOVQ gy+32(FP), DI
	MOVQ xh+40(FP), BX
	MOVQ rxh+48(FP), R12
	MOVQ c+56(FP), AX
	MOVQ acc+64(FP), DX
	VMOVUPS 0(DX), Y16
	VMOVUPS 32(DX), Y17
	VMOVUPS 64(DX), Y18
	VMOVUPS 96(DX), Y19
	VMOVUPS 128(DX), Y20
	VMOVUPS 160(DX), Y21
	VMOVUPS 192(DX), Y22
rback32Loop:
	TRANSPOSE32(0, SI, 0)
	TRANSPOSE32(0, DI, 256)
	TRANSPOSE32(0, BX, 512)
	TRANSPOSE32(0, R12, 768)
	RBACK32STEP(0)
	RBACK32STEP(1)
	RBACK32STEP(2)
	RBACK32STEP(3)
	RBACK32STEP(4)
	RBACK32STEP(5)
	RBACK32STEP(6)
	RBACK32STEP(7)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, BX
	ADDQ $32, R12
	DECQ CX
	JNZ rback32Loop
	VMOVUPS Y16, 0(DX)
	VMOVUPS Y17, 32(DX)
	VMOVUPS Y18, 64(DX)
	VMOVUPS Y19, 96(DX)
	VMOVUPS Y20, 128(DX)
	VMOVUPS Y21, 160(DX)
	VMOVUPS Y22, 192(DX)
	VZEROUPPER
	RET
