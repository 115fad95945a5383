#include "textflag.h"

// The group norm's running sums over eight groups at once, one group a
// lane (norm_lanes.go has the same sums in Go). Each lane adds its own
// group's values in the order of the scalar loops, so every sum has the
// scalar loops' bits; only the chains of different groups overlap. n counts
// steps of four values per group, n ≥ 1; stride is the distance in bytes
// between the groups' values. Accumulators are read from acc and written
// back, so a caller can continue them over several runs.

// Group j's values at position p are at (B)+j·stride: R8 = stride,
// R9 = 3·stride, R10 = 5·stride, R11 = 7·stride reach all eight.
#define STRIDES \
	MOVQ stride+0(FP), R8; \
	LEAQ (R8)(R8*2), R9; \
	LEAQ (R8)(R8*4), R10; \
	LEAQ (R9)(R8*4), R11

// ROWS loads four values of each of the eight groups from B and transposes
// them: A0..A3 end as the rows (value k of groups 0..7 in lanes 0..7);
// T0..T3 are scratch. Each 256-bit half comes from one group, halves
// paired as [0|2], [1|3], [4|6], [5|7] so the shuffles end in group order.
#define ROWS(B, A0, A1, A2, A3, T0, T1, T2, T3) \
	VBROADCASTF64X4 (B), A0; \
	VINSERTF64X4 $1, (B)(R8*2), A0, A0; \
	VBROADCASTF64X4 (B)(R8*1), A1; \
	VINSERTF64X4 $1, (B)(R9*1), A1, A1; \
	VBROADCASTF64X4 (B)(R8*4), A2; \
	VINSERTF64X4 $1, (B)(R9*2), A2, A2; \
	VBROADCASTF64X4 (B)(R10*1), A3; \
	VINSERTF64X4 $1, (B)(R11*1), A3, A3; \
	VUNPCKLPD A1, A0, T0; \
	VUNPCKHPD A1, A0, T1; \
	VUNPCKLPD A3, A2, T2; \
	VUNPCKHPD A3, A2, T3; \
	VSHUFF64X2 $0x88, T2, T0, A0; \
	VSHUFF64X2 $0xDD, T2, T0, A2; \
	VSHUFF64X2 $0x88, T3, T1, A1; \
	VSHUFF64X2 $0xDD, T3, T1, A3

// BACKSTEP: one value of each group, t = gy, X = x (overwritten by x̂).
//   x̂ = (x − μ)·s; sg += t·x̂; sb += t; v = γ·t; sh += v; sxh += x̂·v
#define BACKSTEP(T, X) \
	VSUBPD Z28, X, X; \
	VMULPD Z29, X, X; \
	VMULPD X, T, Z12; \
	VADDPD Z12, Z24, Z24; \
	VADDPD T, Z25, Z25; \
	VMULPD T, Z30, Z13; \
	VADDPD Z13, Z26, Z26; \
	VMULPD Z13, X, Z14; \
	VADDPD Z14, Z27, Z27

// func normBackSums8(stride, n int, gy, x *float64, c *[3][8]float64, acc *[4][8]float64)
// c: μ, s, γ per lane; acc: Σ gy x̂, Σ gy, Σ γ gy, Σ x̂ γ gy.
TEXT ·normBackSums8(SB), NOSPLIT, $0-48
	STRIDES
	MOVQ n+8(FP), CX
	MOVQ gy+16(FP), SI
	MOVQ x+24(FP), DI
	MOVQ c+32(FP), AX
	MOVQ acc+40(FP), DX
	VMOVUPD 0(AX), Z28
	VMOVUPD 64(AX), Z29
	VMOVUPD 128(AX), Z30
	VMOVUPD 0(DX), Z24
	VMOVUPD 64(DX), Z25
	VMOVUPD 128(DX), Z26
	VMOVUPD 192(DX), Z27
backLoop:
	ROWS(SI, Z0, Z1, Z2, Z3, Z8, Z9, Z10, Z11)
	ROWS(DI, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11)
	BACKSTEP(Z0, Z4)
	BACKSTEP(Z1, Z5)
	BACKSTEP(Z2, Z6)
	BACKSTEP(Z3, Z7)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ backLoop
	VMOVUPD Z24, 0(DX)
	VMOVUPD Z25, 64(DX)
	VMOVUPD Z26, 128(DX)
	VMOVUPD Z27, 192(DX)
	VZEROUPPER
	RET

// RFWDSTEP: t = rx, X = x (overwritten by x̂).
//   x̂ = (x − μ)·s; sr += t; sxr += x̂·t
#define RFWDSTEP(T, X) \
	VSUBPD Z28, X, X; \
	VMULPD Z29, X, X; \
	VADDPD T, Z24, Z24; \
	VMULPD T, X, Z12; \
	VADDPD Z12, Z25, Z25

// func normRFwdSums8(stride, n int, rx, x *float64, c *[2][8]float64, acc *[2][8]float64)
// c: μ, s per lane; acc: Σ rx, Σ x̂ rx.
TEXT ·normRFwdSums8(SB), NOSPLIT, $0-48
	STRIDES
	MOVQ n+8(FP), CX
	MOVQ rx+16(FP), SI
	MOVQ x+24(FP), DI
	MOVQ c+32(FP), AX
	MOVQ acc+40(FP), DX
	VMOVUPD 0(AX), Z28
	VMOVUPD 64(AX), Z29
	VMOVUPD 0(DX), Z24
	VMOVUPD 64(DX), Z25
rfwdLoop:
	ROWS(SI, Z0, Z1, Z2, Z3, Z8, Z9, Z10, Z11)
	ROWS(DI, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11)
	RFWDSTEP(Z0, Z4)
	RFWDSTEP(Z1, Z5)
	RFWDSTEP(Z2, Z6)
	RFWDSTEP(Z3, Z7)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ rfwdLoop
	VMOVUPD Z24, 0(DX)
	VMOVUPD Z25, 64(DX)
	VZEROUPPER
	RET

// RBACKSTEP: t = rgy, G = gy, X = x̂, R = R{x̂}.
//   sg += t·x̂ + gy·R{x̂}; sb += t; h = γ·gy; sh += h; sxh += x̂·h;
//   srxh += R{x̂}·h; r = γ·t + u_γ·gy; srh += r; sxrh += x̂·r
#define RBACKSTEP(T, G, X, R) \
	VMULPD X, T, Z29; \
	VMULPD R, G, Z30; \
	VADDPD Z30, Z29, Z29; \
	VADDPD Z29, Z20, Z20; \
	VADDPD T, Z21, Z21; \
	VMULPD G, Z27, Z29; \
	VADDPD Z29, Z22, Z22; \
	VMULPD Z29, X, Z30; \
	VADDPD Z30, Z23, Z23; \
	VMULPD Z29, R, Z30; \
	VADDPD Z30, Z24, Z24; \
	VMULPD T, Z27, Z29; \
	VMULPD G, Z28, Z30; \
	VADDPD Z30, Z29, Z29; \
	VADDPD Z29, Z25, Z25; \
	VMULPD Z29, X, Z30; \
	VADDPD Z30, Z26, Z26

// func normRBackSums8(stride, n int, rgy, gy, xh, rxh *float64, c *[2][8]float64, acc *[7][8]float64)
// c: γ, u_γ per lane; acc: Σ rgy x̂ + gy R{x̂}, Σ rgy, Σ h, Σ x̂ h,
// Σ R{x̂} h, Σ R{h}, Σ x̂ R{h}.
TEXT ·normRBackSums8(SB), NOSPLIT, $0-64
	STRIDES
	MOVQ n+8(FP), CX
	MOVQ rgy+16(FP), SI
	MOVQ gy+24(FP), DI
	MOVQ xh+32(FP), BX
	MOVQ rxh+40(FP), R12
	MOVQ c+48(FP), AX
	MOVQ acc+56(FP), DX
	VMOVUPD 0(AX), Z27
	VMOVUPD 64(AX), Z28
	VMOVUPD 0(DX), Z20
	VMOVUPD 64(DX), Z21
	VMOVUPD 128(DX), Z22
	VMOVUPD 192(DX), Z23
	VMOVUPD 256(DX), Z24
	VMOVUPD 320(DX), Z25
	VMOVUPD 384(DX), Z26
rbackLoop:
	ROWS(SI, Z0, Z1, Z2, Z3, Z8, Z9, Z10, Z11)
	ROWS(DI, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11)
	ROWS(BX, Z12, Z13, Z14, Z15, Z8, Z9, Z10, Z11)
	ROWS(R12, Z16, Z17, Z18, Z19, Z8, Z9, Z10, Z11)
	RBACKSTEP(Z0, Z4, Z12, Z16)
	RBACKSTEP(Z1, Z5, Z13, Z17)
	RBACKSTEP(Z2, Z6, Z14, Z18)
	RBACKSTEP(Z3, Z7, Z15, Z19)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, BX
	ADDQ $32, R12
	DECQ CX
	JNZ rbackLoop
	VMOVUPD Z20, 0(DX)
	VMOVUPD Z21, 64(DX)
	VMOVUPD Z22, 128(DX)
	VMOVUPD Z23, 192(DX)
	VMOVUPD Z24, 256(DX)
	VMOVUPD Z25, 320(DX)
	VMOVUPD Z26, 384(DX)
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
