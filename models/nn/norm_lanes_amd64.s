#include "textflag.h"

// The group norm's running sums over eight groups at once, one group a
// lane (norm_lanes.go has the same sums in Go). Each lane adds its own
// group's values in the order of the scalar loops, so every sum has the
// scalar loops' bits; only the chains of different groups overlap.
// stride is the distance in bytes between the groups' values. Accumulators
// are read from acc and written back, so a caller can continue them over
// several runs.
//
// The transposing kernels take n ≥ 1 steps of eight values per group and a
// scratch of 8·64 + 63 bytes per array. Each step loads one whole cache
// line of every group and array: the groups sit a multiple of 4 KiB apart,
// in the same sets of the L1 cache, and a line read in two halves far
// apart is often gone by the second.

// Group j's values at position p are at (B)+j·stride: R8 = stride,
// R9 = 3·stride, R10 = 5·stride, R11 = 7·stride reach all eight.
#define STRIDES \
	MOVQ stride+0(FP), R8; \
	LEAQ (R8)(R8*2), R9; \
	LEAQ (R8)(R8*4), R10; \
	LEAQ (R9)(R8*4), R11

// HALF transposes four 4×8 halves paired as [0|2], [1|3], [4|6], [5|7]
// (A, B, C, D) into four rows in group order, stored at S(R13): row k holds
// value k of groups 0..7. Z0..Z7 are scratch.
#define HALF(A, B, C, D, S) \
	VUNPCKLPD B, A, Z0; \
	VUNPCKHPD B, A, Z1; \
	VUNPCKLPD D, C, Z2; \
	VUNPCKHPD D, C, Z3; \
	VSHUFF64X2 $0x88, Z2, Z0, Z4; \
	VSHUFF64X2 $0x88, Z3, Z1, Z5; \
	VSHUFF64X2 $0xDD, Z2, Z0, Z6; \
	VSHUFF64X2 $0xDD, Z3, Z1, Z7; \
	VMOVUPD Z4, S(R13); \
	VMOVUPD Z5, (S+64)(R13); \
	VMOVUPD Z6, (S+128)(R13); \
	VMOVUPD Z7, (S+192)(R13)

// TRANSPOSE loads eight values of each group from B and stores them as
// eight rows at S(R13): row k holds value k of groups 0..7. Z0..Z15 are
// scratch.
#define TRANSPOSE(B, S) \
	VMOVUPD (B), Z0; \
	VMOVUPD (B)(R8*1), Z1; \
	VMOVUPD (B)(R8*2), Z2; \
	VMOVUPD (B)(R9*1), Z3; \
	VMOVUPD (B)(R8*4), Z4; \
	VMOVUPD (B)(R10*1), Z5; \
	VMOVUPD (B)(R9*2), Z6; \
	VMOVUPD (B)(R11*1), Z7; \
	VSHUFF64X2 $0x44, Z2, Z0, Z8; \
	VSHUFF64X2 $0xEE, Z2, Z0, Z9; \
	VSHUFF64X2 $0x44, Z3, Z1, Z10; \
	VSHUFF64X2 $0xEE, Z3, Z1, Z11; \
	VSHUFF64X2 $0x44, Z6, Z4, Z12; \
	VSHUFF64X2 $0xEE, Z6, Z4, Z13; \
	VSHUFF64X2 $0x44, Z7, Z5, Z14; \
	VSHUFF64X2 $0xEE, Z7, Z5, Z15; \
	HALF(Z8, Z10, Z12, Z14, S); \
	HALF(Z9, Z11, Z13, Z15, S+256)

// PREFETCH asks for the line PFDIST bytes ahead of B in each of the eight
// groups: eight streams a multiple of 4 KiB apart per array are more than
// the hardware prefetchers follow well.
#define PREFETCH(B) \
	PREFETCHT0 PFDIST(B); \
	PREFETCHT0 PFDIST(B)(R8*1); \
	PREFETCHT0 PFDIST(B)(R8*2); \
	PREFETCHT0 PFDIST(B)(R9*1); \
	PREFETCHT0 PFDIST(B)(R8*4); \
	PREFETCHT0 PFDIST(B)(R10*1); \
	PREFETCHT0 PFDIST(B)(R9*2); \
	PREFETCHT0 PFDIST(B)(R11*1)

#define PFDIST 1024

// SCRATCH points R13 at the 64-byte aligned scratch.
#define SCRATCH \
	MOVQ scr+0(FP), R13; \
	ADDQ $63, R13; \
	ANDQ $-64, R13

// BACKSTEP: value K of each group, gy (row at 64K) and x (at 512+64K).
//   x̂ = (x − μ)·s; sg += gy·x̂; sb += gy; v = γ·gy; sh += v; sxh += x̂·v
#define BACKSTEP(K) \
	VMOVUPD (512+64*K)(R13), Z16; \
	VMOVUPD (64*K)(R13), Z17; \
	VSUBPD Z28, Z16, Z16; \
	VMULPD Z29, Z16, Z16; \
	VMULPD Z16, Z17, Z18; \
	VADDPD Z18, Z24, Z24; \
	VADDPD Z17, Z25, Z25; \
	VMULPD Z17, Z30, Z18; \
	VADDPD Z18, Z26, Z26; \
	VMULPD Z18, Z16, Z19; \
	VADDPD Z19, Z27, Z27

// func normBackSums8(scr *float64, stride, n int, gy, x *float64, c *[3][8]float64, acc *[4][8]float64)
// c: μ, s, γ per lane; acc: Σ gy x̂, Σ gy, Σ γ gy, Σ x̂ γ gy.
TEXT ·normBackSums8(SB), NOSPLIT, $0-56
	SCRATCH
	MOVQ stride+8(FP), R8
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
	MOVQ n+16(FP), CX
	MOVQ gy+24(FP), SI
	MOVQ x+32(FP), DI
	MOVQ c+40(FP), AX
	MOVQ acc+48(FP), DX
	VMOVUPD 0(AX), Z28
	VMOVUPD 64(AX), Z29
	VMOVUPD 128(AX), Z30
	VMOVUPD 0(DX), Z24
	VMOVUPD 64(DX), Z25
	VMOVUPD 128(DX), Z26
	VMOVUPD 192(DX), Z27
backLoop:
	PREFETCH(SI)
	PREFETCH(DI)
	TRANSPOSE(SI, 0)
	TRANSPOSE(DI, 512)
	BACKSTEP(0)
	BACKSTEP(1)
	BACKSTEP(2)
	BACKSTEP(3)
	BACKSTEP(4)
	BACKSTEP(5)
	BACKSTEP(6)
	BACKSTEP(7)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ backLoop
	VMOVUPD Z24, 0(DX)
	VMOVUPD Z25, 64(DX)
	VMOVUPD Z26, 128(DX)
	VMOVUPD Z27, 192(DX)
	VZEROUPPER
	RET

// RFWDSTEP: value K of each group, rx (row at 64K) and x (at 512+64K).
//   x̂ = (x − μ)·s; sr += rx; sxr += x̂·rx
#define RFWDSTEP(K) \
	VMOVUPD (512+64*K)(R13), Z16; \
	VMOVUPD (64*K)(R13), Z17; \
	VSUBPD Z28, Z16, Z16; \
	VMULPD Z29, Z16, Z16; \
	VADDPD Z17, Z24, Z24; \
	VMULPD Z17, Z16, Z18; \
	VADDPD Z18, Z25, Z25

// func normRFwdSums8(scr *float64, stride, n int, rx, x *float64, c *[2][8]float64, acc *[2][8]float64)
// c: μ, s per lane; acc: Σ rx, Σ x̂ rx.
TEXT ·normRFwdSums8(SB), NOSPLIT, $0-56
	SCRATCH
	MOVQ stride+8(FP), R8
	LEAQ (R8)(R8*2), R9
	LEAQ (R8)(R8*4), R10
	LEAQ (R9)(R8*4), R11
	MOVQ n+16(FP), CX
	MOVQ rx+24(FP), SI
	MOVQ x+32(FP), DI
	MOVQ c+40(FP), AX
	MOVQ acc+48(FP), DX
	VMOVUPD 0(AX), Z28
	VMOVUPD 64(AX), Z29
	VMOVUPD 0(DX), Z24
	VMOVUPD 64(DX), Z25
rfwdLoop:
	PREFETCH(SI)
	PREFETCH(DI)
	TRANSPOSE(SI, 0)
	TRANSPOSE(DI, 512)
	RFWDSTEP(0)
	RFWDSTEP(1)
	RFWDSTEP(2)
	RFWDSTEP(3)
	RFWDSTEP(4)
	RFWDSTEP(5)
	RFWDSTEP(6)
	RFWDSTEP(7)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ rfwdLoop
	VMOVUPD Z24, 0(DX)
	VMOVUPD Z25, 64(DX)
	VZEROUPPER
	RET

// The forward statistics keep each group's four interleaved partial sums
// (see sum) in one 256-bit register, so they need no transposition and
// only AVX2. acc holds the four partial sums of each group.

// func normSum8(stride, n int, x *float64, acc *[8][4]float64)
TEXT ·normSum8(SB), NOSPLIT, $0-32
	STRIDES
	MOVQ n+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ acc+24(FP), DX
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD 160(DX), Y5
	VMOVUPD 192(DX), Y6
	VMOVUPD 224(DX), Y7
sumLoop:
	VADDPD (SI), Y0, Y0
	VADDPD (SI)(R8*1), Y1, Y1
	VADDPD (SI)(R8*2), Y2, Y2
	VADDPD (SI)(R9*1), Y3, Y3
	VADDPD (SI)(R8*4), Y4, Y4
	VADDPD (SI)(R10*1), Y5, Y5
	VADDPD (SI)(R9*2), Y6, Y6
	VADDPD (SI)(R11*1), Y7, Y7
	ADDQ $32, SI
	DECQ CX
	JNZ sumLoop
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET

// SQDEV adds (x − μ)² of group j (its values at ADDR, μ at MU) to ACC.
#define SQDEV(ADDR, MU, ACC, T) \
	VMOVUPD ADDR, T; \
	VSUBPD MU, T, T; \
	VMULPD T, T, T; \
	VADDPD T, ACC, ACC

// func normSqDev8(stride, n int, x *float64, mu *[8][4]float64, acc *[8][4]float64)
// mu holds each group's mean four times.
TEXT ·normSqDev8(SB), NOSPLIT, $0-40
	STRIDES
	MOVQ n+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ mu+24(FP), AX
	MOVQ acc+32(FP), DX
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD 160(DX), Y5
	VMOVUPD 192(DX), Y6
	VMOVUPD 224(DX), Y7
sqLoop:
	SQDEV((SI), 0(AX), Y0, Y8)
	SQDEV((SI)(R8*1), 32(AX), Y1, Y9)
	SQDEV((SI)(R8*2), 64(AX), Y2, Y10)
	SQDEV((SI)(R9*1), 96(AX), Y3, Y11)
	SQDEV((SI)(R8*4), 128(AX), Y4, Y12)
	SQDEV((SI)(R10*1), 160(AX), Y5, Y13)
	SQDEV((SI)(R9*2), 192(AX), Y6, Y14)
	SQDEV((SI)(R11*1), 224(AX), Y7, Y15)
	ADDQ $32, SI
	DECQ CX
	JNZ sqLoop
	VMOVUPD Y0, 0(DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET
