#include "textflag.h"

// func patchRow5(nr int, dst, src *float64, runs *int)
//
// Copies nr runs of five values, run i from src + runs[i] to dst + 5i: a
// patch row of a convolution with 5-wide kernels (conv.im2rowDense), each
// run as one 32-byte and one 8-byte move. Requires AVX, nr ≥ 1.
TEXT ·patchRow5(SB), NOSPLIT, $0-32
	MOVQ nr+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ src+16(FP), SI
	MOVQ runs+24(FP), BX
loop:
	MOVQ (BX), AX
	VMOVUPD (SI)(AX*8), Y0
	MOVSD 32(SI)(AX*8), X1
	VMOVUPD Y0, (DI)
	MOVSD X1, 32(DI)
	ADDQ $8, BX
	ADDQ $40, DI
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET
