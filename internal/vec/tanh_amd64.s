#include "textflag.h"

// Offsets of the constants in tanhTable (32 bytes each).
#define ABS 0
#define SIGN 32
#define BIG 64
#define CUT 96
#define P0 128
#define P1 160
#define P2 192
#define Q0 224
#define Q1 256
#define Q2 288
#define LOG2E 320
#define LN2U 352
#define LN2L 384
#define SIXTEENTH 416
#define C8 448
#define C7 480
#define C6 512
#define C5 544
#define C4 576
#define C3 608
#define HALF 640
#define ONE 672
#define TWO 704
#define BIAS 736

// func tanhAVX2(dst, src []float64, k *tanhTable)
//
// dst[i] = math.Tanh(src[i]) for i < len(src)&^3, four lanes at a time.
// Each lane computes both of math.Tanh's forms and keeps the one math.Tanh
// would take: for |x| >= 0.625 the exponential form 1 − 2/(e+1), e =
// exp(2|x|) evaluated as math.Exp's FMA branch evaluates it on amd64 (2|x|
// lies in [1.25, 88.03], where math.Exp neither overflows nor goes
// subnormal), sign copied from x; for |x| < 0.625 the rational form x +
// x·s·P(s)/Q(s), s = x², with separate products and sums as the compiled
// Go does them; ±1 beyond ½·MAXLOG; x itself when x == ±0. NaN fails every
// comparison and so takes the rational form, which returns it quieted, as
// math.Tanh does. Requires AVX2 and FMA (checked by the caller) and
// len(dst) >= len(src).
TEXT ·tanhAVX2(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ k+48(FP), R8
	ANDQ $-4, CX
	JZ done
	XORQ AX, AX
	VMOVUPD ONE(R8), Y15
	VMOVUPD TWO(R8), Y14
	VMOVUPD SIGN(R8), Y13
	VXORPD Y12, Y12, Y12

loop:
	VMOVUPD (SI)(AX*8), Y0 // x
	VANDPD ABS(R8), Y0, Y1 // z = |x|

	// e = exp(2z): k = round(2z·log₂e), r = (2z − k·ln2u − k·ln2l)/16,
	// p = r·(1 + r·(½ + r·(⅙ + …))), then four doublings p·(p+2) (the
	// last fused with the +1), then e = p·2^k.
	VADDPD Y1, Y1, Y2
	VMULPD LOG2E(R8), Y2, Y3
	VCVTPD2DQY Y3, X4
	VCVTDQ2PD X4, Y3
	VFNMADD231PD LN2U(R8), Y3, Y2
	VFNMADD231PD LN2L(R8), Y3, Y2
	VMULPD SIXTEENTH(R8), Y2, Y2
	VMOVUPD C8(R8), Y3
	VFMADD213PD C7(R8), Y2, Y3
	VFMADD213PD C6(R8), Y2, Y3
	VFMADD213PD C5(R8), Y2, Y3
	VFMADD213PD C4(R8), Y2, Y3
	VFMADD213PD C3(R8), Y2, Y3
	VFMADD213PD HALF(R8), Y2, Y3
	VFMADD213PD Y15, Y2, Y3
	VMULPD Y3, Y2, Y2
	VADDPD Y14, Y2, Y3
	VMULPD Y3, Y2, Y2
	VADDPD Y14, Y2, Y3
	VMULPD Y3, Y2, Y2
	VADDPD Y14, Y2, Y3
	VMULPD Y3, Y2, Y2
	VADDPD Y14, Y2, Y3
	VFMADD213PD Y15, Y3, Y2
	VPADDD BIAS(R8), X4, X4
	VPMOVZXDQ X4, Y4
	VPSLLQ $52, Y4, Y4
	VMULPD Y4, Y2, Y2

	// 1 − 2/(e+1), with x's sign.
	VADDPD Y15, Y2, Y2
	VDIVPD Y2, Y14, Y2
	VSUBPD Y2, Y15, Y2
	VANDPD Y13, Y0, Y5
	VORPD Y5, Y2, Y2

	// x + x·s·P(s)/Q(s), s = x².
	VMULPD Y0, Y0, Y6
	VMULPD Y6, Y0, Y7
	VMULPD P0(R8), Y6, Y8
	VADDPD P1(R8), Y8, Y8
	VMULPD Y6, Y8, Y8
	VADDPD P2(R8), Y8, Y8
	VMULPD Y7, Y8, Y8
	VADDPD Q0(R8), Y6, Y9
	VMULPD Y6, Y9, Y9
	VADDPD Q1(R8), Y9, Y9
	VMULPD Y6, Y9, Y9
	VADDPD Q2(R8), Y9, Y9
	VDIVPD Y9, Y8, Y8
	VADDPD Y8, Y0, Y8

	// Keep the form math.Tanh takes.
	VCMPPD $0x1d, CUT(R8), Y1, Y9 // z >= 0.625 (ordered)
	VBLENDVPD Y9, Y2, Y8, Y8
	VCMPPD $0x1e, BIG(R8), Y1, Y9 // z > ½·MAXLOG (ordered)
	VORPD Y15, Y5, Y5 // ±1
	VBLENDVPD Y9, Y5, Y8, Y8
	VCMPPD $0x00, Y12, Y0, Y9 // x == ±0
	VBLENDVPD Y9, Y0, Y8, Y8
	VMOVUPD Y8, (DI)(AX*8)

	ADDQ $4, AX
	CMPQ AX, CX
	JL loop

done:
	VZEROUPPER
	RET
