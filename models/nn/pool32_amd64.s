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

// func maxPool2Rows32(rows, n int, r0, y *float32, arg *int32, base, w int)
//
// pool.forwardMax2 on n &^ 3 windows of each of rows consecutive output
// rows, 2×2 with stride 2 (rows > 1 only when n is the output width, so
// that y and arg run on from one row to the next): r0 is the first
// window row's inputs, the second row's w values on and each next output
// row's 2w on; base is the sample offset of r0[0], w the input width. Per
// window, as greater does it, the pair of a row whose second value b
// beats the first a is the one with (a + 0) − (b + 0) negative, then the
// rows' winners likewise; y gets the winner's value and arg its offset.
// Eight windows a step (the lanes in VSHUFPS's order, put back by VPERMPD
// before the stores), then four. Requires AVX2.
TEXT ·maxPool2Rows32(SB), NOSPLIT, $0-56
	MOVQ rows+0(FP), R9
	MOVQ r0+16(FP), BX
	MOVQ y+24(FP), DI
	MOVQ arg+32(FP), R8
	MOVQ base+40(FP), R10
	MOVQ w+48(FP), R11
	SHLQ $2, R11
	MOVQ w+48(FP), R12
	SHLQ $1, R12
	VPXOR Y15, Y15, Y15
	VPBROADCASTD w+48(FP), Y13
	VPBROADCASTD sixteen<>(SB), Y12
row:
	// BX: this row's first input row; R10: its sample offset.
	MOVQ BX, SI
	LEAQ (BX)(R11*1), DX
	VMOVQ R10, X14
	VPBROADCASTD X14, Y14
	VPADDD ox8<>(SB), Y14, Y11
	MOVQ n+8(FP), CX
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
	JLT next
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
	ADDQ $16, DI
	ADDQ $16, R8
next:
	LEAQ (BX)(R11*2), BX
	ADDQ R12, R10
	DECQ R9
	JNZ row
	VZEROUPPER
	RET

// Doubleword permutations that spread four windows over the eight
// positions of their row pairs (0, 0, 1, 1, …), for the first and the
// last four of eight windows; the positions in a window's row of the two
// values of four windows side by side; window positions 2·ox of eight.
DATA spread0<>+0(SB)/4, $0
DATA spread0<>+4(SB)/4, $0
DATA spread0<>+8(SB)/4, $1
DATA spread0<>+12(SB)/4, $1
DATA spread0<>+16(SB)/4, $2
DATA spread0<>+20(SB)/4, $2
DATA spread0<>+24(SB)/4, $3
DATA spread0<>+28(SB)/4, $3
GLOBL spread0<>(SB), RODATA|NOPTR, $32

DATA spread1<>+0(SB)/4, $4
DATA spread1<>+4(SB)/4, $4
DATA spread1<>+8(SB)/4, $5
DATA spread1<>+12(SB)/4, $5
DATA spread1<>+16(SB)/4, $6
DATA spread1<>+20(SB)/4, $6
DATA spread1<>+24(SB)/4, $7
DATA spread1<>+28(SB)/4, $7
GLOBL spread1<>(SB), RODATA|NOPTR, $32

DATA pair01d<>+0(SB)/4, $0
DATA pair01d<>+4(SB)/4, $1
DATA pair01d<>+8(SB)/4, $0
DATA pair01d<>+12(SB)/4, $1
DATA pair01d<>+16(SB)/4, $0
DATA pair01d<>+20(SB)/4, $1
DATA pair01d<>+24(SB)/4, $0
DATA pair01d<>+28(SB)/4, $1
GLOBL pair01d<>(SB), RODATA|NOPTR, $32

DATA ox8n<>+0(SB)/4, $0
DATA ox8n<>+4(SB)/4, $2
DATA ox8n<>+8(SB)/4, $4
DATA ox8n<>+12(SB)/4, $6
DATA ox8n<>+16(SB)/4, $8
DATA ox8n<>+20(SB)/4, $10
DATA ox8n<>+24(SB)/4, $12
DATA ox8n<>+28(SB)/4, $14
GLOBL ox8n<>(SB), RODATA|NOPTR, $32

// SCATTER4(V, A, D) stores the four windows' row pairs whose values 0 + gy
// are in V and whose selected positions relative to the window (0, 1 in
// the first row, w, w + 1 in the second) are in A, both spread by D: each
// position gets the value where it is the selected one and +0 elsewhere.
#define SCATTER4(V, A, D) \
	VPERMD V, D, Y2; \
	VPERMD A, D, Y3; \
	VPCMPEQD Y12, Y3, Y4; \
	VPAND Y2, Y4, Y4; \
	VMOVDQU Y4, (DI); \
	VPCMPEQD Y11, Y3, Y4; \
	VPAND Y2, Y4, Y4; \
	VMOVDQU Y4, (DX)

// func scatterPool2Rows32(rows, n int, gy *float32, arg *int32, d0 *float32, base, w int)
//
// scatterPool2Row64 for float32 over rows consecutive output rows of n
// windows each (rows > 1 only when n is the output width, so that gy and
// arg run on from one row to the next): pool.scatterPlane on n &^ 3
// windows of each row of a 2×2 pool of stride 2 that tiles its plane. d0
// is the first row's first input row (in the plane's gradient), the
// second w values on, each next row's 2w on; base is the sample offset
// of d0[0], w the input width. Each input gets 0 + gy of its window where
// arg selects it and +0 elsewhere: the bits of clearing the rows and
// storing 0 + gy at the selected inputs. Eight windows a step, then four.
// Requires AVX2.
TEXT ·scatterPool2Rows32(SB), NOSPLIT, $0-56
	MOVQ rows+0(FP), R9
	MOVQ gy+16(FP), SI
	MOVQ arg+24(FP), R8
	MOVQ d0+32(FP), DI
	MOVQ w+48(FP), R11
	SHLQ $2, R11
	// R10: the bytes from the end of a row's windows in d0 to the next
	// row's start, 4·(2w − 2·(n &^ 3)); Y8: the same in values, for the
	// window positions.
	MOVQ n+8(FP), AX
	ANDQ $-4, AX
	SHLQ $3, AX
	MOVQ R11, R10
	SHLQ $1, R10
	SUBQ AX, R10
	MOVQ R10, AX
	SHRQ $2, AX
	VMOVQ AX, X8
	VPBROADCASTD X8, Y8
	VXORPS Y15, Y15, Y15
	VPBROADCASTD base+40(FP), Y14
	VPADDD ox8n<>(SB), Y14, Y14
	VPBROADCASTD sixteen<>(SB), Y13
	VMOVDQU pair01d<>(SB), Y12
	VPBROADCASTD w+48(FP), Y11
	VPADDD Y12, Y11, Y11
	VMOVDQU spread0<>(SB), Y10
	VMOVDQU spread1<>(SB), Y9
srow:
	LEAQ (DI)(R11*1), DX
	MOVQ n+8(FP), CX
	CMPQ CX, $8
	JLT sfour
seight:
	VMOVUPS (SI), Y0
	VADDPS Y0, Y15, Y0
	VMOVDQU (R8), Y1
	VPSUBD Y14, Y1, Y1
	SCATTER4(Y0, Y1, Y10)
	ADDQ $32, DI
	ADDQ $32, DX
	SCATTER4(Y0, Y1, Y9)
	VPADDD Y13, Y14, Y14
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, DI
	ADDQ $32, DX
	SUBQ $8, CX
	CMPQ CX, $8
	JGE seight
sfour:
	CMPQ CX, $4
	JLT snext
	VMOVUPS (SI), X0
	VADDPS X0, X15, X0
	VMOVDQU (R8), X1
	VPSUBD X14, X1, X1
	SCATTER4(Y0, Y1, Y10)
	// The next window's position: eight values on.
	VPSRLD $1, Y13, Y2
	VPADDD Y2, Y14, Y14
	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $32, DI
snext:
	ADDQ R10, DI
	VPADDD Y8, Y14, Y14
	DECQ R9
	JNZ srow
	VZEROUPPER
	RET
