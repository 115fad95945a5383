#include "textflag.h"

// Window positions 2·ox of eight windows in the order VSHUFPS leaves them
// (0, 1, 4, 5 | 2, 3, 6, 7), and of four.
DATA ox8<>+0(SB)/4, $0
DATA ox8<>+4(SB)/4, $2
DATA ox8<>+8(SB)/4, $8
DATA ox8<>+12(SB)/4, $10
DATA ox8<>+16(SB)/4, $4
DATA ox8<>+20(SB)/4, $6
DATA ox8<>+24(SB)/4, $12
DATA ox8<>+28(SB)/4, $14
GLOBL ox8<>(SB), RODATA|NOPTR, $32

DATA ox4<>+0(SB)/4, $0
DATA ox4<>+4(SB)/4, $2
DATA ox4<>+8(SB)/4, $4
DATA ox4<>+12(SB)/4, $6
GLOBL ox4<>(SB), RODATA|NOPTR, $16

DATA sixteen<>+0(SB)/4, $16
GLOBL sixteen<>(SB), RODATA|NOPTR, $4

// func maxPool2Row32(n int, r0, r1, y *float32, arg *int32, base, w int)
//
// pool.forwardMax2 on n &^ 3 windows of one output row, 2×2 with stride
// 2: r0 and r1 are the window rows' inputs, base the sample offset of
// r0[0], w the input width. Per window, as greater does it, the pair of a
// row whose second value b beats the first a is the one with
// (a + 0) − (b + 0) negative, then the rows' winners likewise; y gets the
// winner's value and arg its offset. Eight windows a step (the lanes in
// VSHUFPS's order, put back by VPERMPD before the stores), then four.
// Requires AVX2.
TEXT ·maxPool2Row32(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ r0+8(FP), SI
	MOVQ r1+16(FP), DX
	MOVQ y+24(FP), DI
	MOVQ arg+32(FP), R8
	VPXOR Y15, Y15, Y15
	VPBROADCASTD base+40(FP), Y14
	VPBROADCASTD w+48(FP), Y13
	VPBROADCASTD sixteen<>(SB), Y12
	VPADDD ox8<>(SB), Y14, Y11
	CMPQ CX, $8
	JLT four
eight:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VSHUFPS $0xDD, Y1, Y0, Y3
	VADDPS Y15, Y2, Y4
	VADDPS Y15, Y3, Y5
	VSUBPS Y5, Y4, Y4
	VBLENDVPS Y4, Y3, Y2, Y6
	VPSRLD $31, Y4, Y4
	VPADDD Y11, Y4, Y7
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VSHUFPS $0xDD, Y1, Y0, Y3
	VADDPS Y15, Y2, Y4
	VADDPS Y15, Y3, Y5
	VSUBPS Y5, Y4, Y4
	VBLENDVPS Y4, Y3, Y2, Y8
	VPSRLD $31, Y4, Y4
	VPADDD Y11, Y4, Y9
	VPADDD Y13, Y9, Y9
	VADDPS Y15, Y6, Y4
	VADDPS Y15, Y8, Y5
	VSUBPS Y5, Y4, Y4
	VBLENDVPS Y4, Y8, Y6, Y0
	VBLENDVPS Y4, Y9, Y7, Y1
	VPERMPD $0xD8, Y0, Y0
	VPERMQ $0xD8, Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVDQU Y1, (R8)
	VPADDD Y12, Y11, Y11
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $32, DI
	ADDQ $32, R8
	SUBQ $8, CX
	CMPQ CX, $8
	JGE eight
four:
	CMPQ CX, $4
	JLT done
	// Y11's first lane is the next window's position; ox4 spreads it.
	VPBROADCASTD X11, X10
	VPADDD ox4<>(SB), X10, X11
	VMOVUPS (SI), X0
	VMOVUPS 16(SI), X1
	VSHUFPS $0x88, X1, X0, X2
	VSHUFPS $0xDD, X1, X0, X3
	VADDPS X15, X2, X4
	VADDPS X15, X3, X5
	VSUBPS X5, X4, X4
	VBLENDVPS X4, X3, X2, X6
	VPSRLD $31, X4, X4
	VPADDD X11, X4, X7
	VMOVUPS (DX), X0
	VMOVUPS 16(DX), X1
	VSHUFPS $0x88, X1, X0, X2
	VSHUFPS $0xDD, X1, X0, X3
	VADDPS X15, X2, X4
	VADDPS X15, X3, X5
	VSUBPS X5, X4, X4
	VBLENDVPS X4, X3, X2, X8
	VPSRLD $31, X4, X4
	VPADDD X11, X4, X9
	VPADDD X13, X9, X9
	VADDPS X15, X6, X4
	VADDPS X15, X8, X5
	VSUBPS X5, X4, X4
	VBLENDVPS X4, X8, X6, X0
	VBLENDVPS X4, X9, X7, X1
	VMOVUPS X0, (DI)
	VMOVDQU X1, (R8)
done:
	VZEROUPPER
	RET
