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

// Lanes 0, 1, 0, 1: the positions in a window's row of the two values of
// two windows side by side.
DATA pair01<>+0(SB)/8, $0
DATA pair01<>+8(SB)/8, $1
DATA pair01<>+16(SB)/8, $0
DATA pair01<>+24(SB)/8, $1
GLOBL pair01<>(SB), RODATA|NOPTR, $32

DATA ox4n<>+0(SB)/8, $0
DATA ox4n<>+8(SB)/8, $2
DATA ox4n<>+16(SB)/8, $4
DATA ox4n<>+24(SB)/8, $6
GLOBL ox4n<>(SB), RODATA|NOPTR, $32

// func scatterPool2Row64(n int, gy *float64, arg *int32, d0, d1 *float64, base, w int)
//
// pool.scatterPlane on n &^ 3 windows of one output row of a 2×2 pool of
// stride 2 that tiles its plane: d0 and d1 are the windows' two input
// rows (in the plane's gradient), base the sample offset of d0[0], w the
// input width. Each input gets 0 + gy of its window where arg selects it
// and +0 elsewhere: the bits of clearing the rows and storing 0 + gy at
// the selected inputs. Four windows a step. Requires AVX2.
TEXT ·scatterPool2Row64(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ gy+8(FP), SI
	MOVQ arg+16(FP), R8
	MOVQ d0+24(FP), DI
	MOVQ d1+32(FP), DX
	SHRQ $2, CX
	JZ sdone
	VXORPD Y15, Y15, Y15
	VPBROADCASTQ base+40(FP), Y14
	VPADDQ ox4n<>(SB), Y14, Y14
	VPBROADCASTQ eightq<>(SB), Y13
	VMOVDQU pair01<>(SB), Y12
	VPBROADCASTQ w+48(FP), Y11
	VPADDQ Y12, Y11, Y11
sloop:
	VMOVUPD (SI), Y0
	VADDPD Y0, Y15, Y0
	VPMOVSXDQ (R8), Y1
	VPSUBQ Y14, Y1, Y1
	VPERMPD $0x50, Y0, Y2
	VPERMPD $0xFA, Y0, Y3
	VPERMQ $0x50, Y1, Y4
	VPERMQ $0xFA, Y1, Y5
	VPCMPEQQ Y12, Y4, Y6
	VPAND Y2, Y6, Y6
	VMOVDQU Y6, (DI)
	VPCMPEQQ Y12, Y5, Y6
	VPAND Y3, Y6, Y6
	VMOVDQU Y6, 32(DI)
	VPCMPEQQ Y11, Y4, Y6
	VPAND Y2, Y6, Y6
	VMOVDQU Y6, (DX)
	VPCMPEQQ Y11, Y5, Y6
	VPAND Y3, Y6, Y6
	VMOVDQU Y6, 32(DX)
	VPADDQ Y13, Y14, Y14
	ADDQ $32, SI
	ADDQ $16, R8
	ADDQ $64, DI
	ADDQ $64, DX
	DECQ CX
	JNZ sloop
sdone:
	VZEROUPPER
	RET
