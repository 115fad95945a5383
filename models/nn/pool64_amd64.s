#include "textflag.h"

// Window positions 2·ox of four windows in the order VUNPCKLPD leaves
// them (0, 2 | 1, 3), as quadwords, and the doublewords of those
// quadwords' low halves in window order.
DATA ox4q<>+0(SB)/8, $0
DATA ox4q<>+8(SB)/8, $4
DATA ox4q<>+16(SB)/8, $2
DATA ox4q<>+24(SB)/8, $6
GLOBL ox4q<>(SB), RODATA|NOPTR, $32

DATA lowdw<>+0(SB)/4, $0
DATA lowdw<>+4(SB)/4, $4
DATA lowdw<>+8(SB)/4, $2
DATA lowdw<>+12(SB)/4, $6
DATA lowdw<>+16(SB)/4, $0
DATA lowdw<>+20(SB)/4, $0
DATA lowdw<>+24(SB)/4, $0
DATA lowdw<>+28(SB)/4, $0
GLOBL lowdw<>(SB), RODATA|NOPTR, $32

DATA eightq<>+0(SB)/8, $8
GLOBL eightq<>(SB), RODATA|NOPTR, $8

// func maxPool2Row64(n int, r0, r1, y *float64, arg *int32, base, w int)
//
// maxPool2Row32 for float64: pool.max2Plane on n &^ 3 windows of one
// output row, 2×2 with stride 2, four windows a step (the lanes in
// VUNPCKLPD's order, put back by VPERMPD and VPERMD before the stores).
// Per window, as greater does it, the pair of a row whose second value b
// beats the first a is the one with (a + 0) − (b + 0) negative, then the
// rows' winners likewise; y gets the winner's value and arg its offset.
// Requires AVX2.
TEXT ·maxPool2Row64(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ y+24(FP), DI
	MOVQ arg+32(FP), R8
	SHRQ $2, CX
	JZ done
	VXORPD Y15, Y15, Y15
	VPBROADCASTQ base+40(FP), Y14
	VPBROADCASTQ w+48(FP), Y13
	VPBROADCASTQ eightq<>(SB), Y12
	VPADDQ ox4q<>(SB), Y14, Y11
	VMOVDQU lowdw<>(SB), Y10
loop:
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y1
	VUNPCKLPD Y1, Y0, Y2
	VUNPCKHPD Y1, Y0, Y3
	VADDPD Y15, Y2, Y4
	VADDPD Y15, Y3, Y5
	VSUBPD Y5, Y4, Y4
	VBLENDVPD Y4, Y3, Y2, Y6
	VPSRLQ $63, Y4, Y4
	VPADDQ Y11, Y4, Y7
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VUNPCKLPD Y1, Y0, Y2
	VUNPCKHPD Y1, Y0, Y3
	VADDPD Y15, Y2, Y4
	VADDPD Y15, Y3, Y5
	VSUBPD Y5, Y4, Y4
	VBLENDVPD Y4, Y3, Y2, Y8
	VPSRLQ $63, Y4, Y4
	VPADDQ Y11, Y4, Y9
	VPADDQ Y13, Y9, Y9
	VADDPD Y15, Y6, Y4
	VADDPD Y15, Y8, Y5
	VSUBPD Y5, Y4, Y4
	VBLENDVPD Y4, Y8, Y6, Y0
	VBLENDVPD Y4, Y9, Y7, Y1
	VPERMPD $0xD8, Y0, Y0
	VPERMD Y1, Y10, Y1
	VMOVUPD Y0, (DI)
	VMOVDQU X1, (R8)
	VPADDQ Y12, Y11, Y11
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $32, DI
	ADDQ $16, R8
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET
