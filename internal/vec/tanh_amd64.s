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

// func tanhAVX512(dst, src []float64, k *tanhTable)
//
// tanhAVX2's lane arithmetic on eight lanes (constants broadcast from the
// table's first word of each entry, selections by mask registers), over
// all of src: the last one to seven values in one masked group. Requires
// AVX-512F (checked by the caller) and len(dst) >= len(src).
TEXT ·tanhAVX512(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ k+48(FP), R8
	VBROADCASTSD ONE(R8), Z31
	VBROADCASTSD TWO(R8), Z30
	VBROADCASTSD SIGN(R8), Z29
	VBROADCASTSD ABS(R8), Z28
	VPXORQ Z27, Z27, Z27
	MOVQ $0xff, BX
	KMOVW BX, K1
	CMPQ CX, $8
	JL tail

loop:
	VMOVUPD.Z (SI), K1, Z0 // x
	VPANDQ Z28, Z0, Z1 // z = |x|

	// e = exp(2z), as in tanhAVX2.
	VADDPD Z1, Z1, Z2
	VMULPD.BCST LOG2E(R8), Z2, Z3
	VCVTPD2DQ Z3, Y4
	VCVTDQ2PD Y4, Z3
	VFNMADD231PD.BCST LN2U(R8), Z3, Z2
	VFNMADD231PD.BCST LN2L(R8), Z3, Z2
	VMULPD.BCST SIXTEENTH(R8), Z2, Z2
	VBROADCASTSD C8(R8), Z3
	VFMADD213PD.BCST C7(R8), Z2, Z3
	VFMADD213PD.BCST C6(R8), Z2, Z3
	VFMADD213PD.BCST C5(R8), Z2, Z3
	VFMADD213PD.BCST C4(R8), Z2, Z3
	VFMADD213PD.BCST C3(R8), Z2, Z3
	VFMADD213PD.BCST HALF(R8), Z2, Z3
	VFMADD213PD Z31, Z2, Z3
	VMULPD Z3, Z2, Z2
	VADDPD Z30, Z2, Z3
	VMULPD Z3, Z2, Z2
	VADDPD Z30, Z2, Z3
	VMULPD Z3, Z2, Z2
	VADDPD Z30, Z2, Z3
	VMULPD Z3, Z2, Z2
	VADDPD Z30, Z2, Z3
	VFMADD213PD Z31, Z3, Z2
	VPADDD BIAS(R8), Y4, Y4
	VPMOVZXDQ Y4, Z4
	VPSLLQ $52, Z4, Z4
	VMULPD Z4, Z2, Z2

	// 1 − 2/(e+1), with x's sign.
	VADDPD Z31, Z2, Z2
	VDIVPD Z2, Z30, Z2
	VSUBPD Z2, Z31, Z2
	VPANDQ Z29, Z0, Z5
	VPORQ Z5, Z2, Z2

	// x + x·s·P(s)/Q(s), s = x².
	VMULPD Z0, Z0, Z6
	VMULPD Z6, Z0, Z7
	VMULPD.BCST P0(R8), Z6, Z8
	VADDPD.BCST P1(R8), Z8, Z8
	VMULPD Z6, Z8, Z8
	VADDPD.BCST P2(R8), Z8, Z8
	VMULPD Z7, Z8, Z8
	VADDPD.BCST Q0(R8), Z6, Z9
	VMULPD Z6, Z9, Z9
	VADDPD.BCST Q1(R8), Z9, Z9
	VMULPD Z6, Z9, Z9
	VADDPD.BCST Q2(R8), Z9, Z9
	VDIVPD Z9, Z8, Z8
	VADDPD Z8, Z0, Z8

	// Keep the form math.Tanh takes.
	VCMPPD.BCST $0x1d, CUT(R8), Z1, K2 // z >= 0.625 (ordered)
	VMOVAPD Z2, K2, Z8
	VCMPPD.BCST $0x1e, BIG(R8), Z1, K2 // z > ½·MAXLOG (ordered)
	VPORQ Z31, Z5, Z5 // ±1
	VMOVAPD Z5, K2, Z8
	VCMPPD $0x00, Z27, Z0, K2 // x == ±0
	VMOVAPD Z0, K2, Z8
	VMOVUPD Z8, K1, (DI)

	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE loop

tail:
	// One more pass, masked to the last CX < 8 values, which ends the loop.
	TESTQ CX, CX
	JZ done512
	MOVQ $1, BX
	SHLQ CX, BX
	DECQ BX
	KMOVW BX, K1
	MOVQ $8, CX
	JMP loop

done512:
	VZEROUPPER
	RET
