#include "textflag.h"

// The float32 twins of norm_amd64.s's kernels the float32 passes run:
// eight values a step, each through the same operations, in the same
// order and rounding, as the scalar loop of norm_kernels.go (no fused
// multiply-adds), and with the operands in the order of the compiled
// scalar loop inlined in its caller (the first operand's NaN is the one
// an operation on two NaNs returns). Requires AVX; n counts groups of
// eight, n ≥ 1.

// func normOut32(n int, y, x *float32, mu, s, gam, b float32)
TEXT ·normOut32(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ y+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSS mu+24(FP), Y8
	VBROADCASTSS s+28(FP), Y9
	VBROADCASTSS gam+32(FP), Y10
	VBROADCASTSS b+36(FP), Y11
out32Loop:
	VMOVUPS (SI), Y0
	VSUBPS Y8, Y0, Y0
	VMULPS Y9, Y0, Y0
	VMULPS Y10, Y0, Y0
	VADDPS Y11, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ out32Loop
	VZEROUPPER
	RET

// func normProj32(n int, h, x *float32, mu, s, mh, mxh float32)
TEXT ·normProj32(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ h+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSS mu+24(FP), Y8
	VBROADCASTSS s+28(FP), Y9
	VBROADCASTSS mh+32(FP), Y10
	VBROADCASTSS mxh+36(FP), Y11
proj32Loop:
	VMOVUPS (SI), Y0
	VSUBPS Y8, Y0, Y0
	VMULPS Y9, Y0, Y0
	VMULPS Y11, Y0, Y0
	VMOVUPS (DI), Y1
	VSUBPS Y10, Y1, Y1
	VSUBPS Y0, Y1, Y1
	VMULPS Y9, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ proj32Loop
	VZEROUPPER
	RET

// func normTangent32(n int, r, y, rx, xh *float32, s, mr, a, gam, gu, bu float32)
TEXT ·normTangent32(SB), NOSPLIT, $0-64
	MOVQ n+0(FP), CX
	MOVQ r+8(FP), DI
	MOVQ y+16(FP), DX
	MOVQ rx+24(FP), SI
	MOVQ xh+32(FP), BX
	VBROADCASTSS s+40(FP), Y8
	VBROADCASTSS mr+44(FP), Y9
	VBROADCASTSS a+48(FP), Y10
	VBROADCASTSS gam+52(FP), Y11
	VBROADCASTSS gu+56(FP), Y12
	VBROADCASTSS bu+60(FP), Y13
tan32Loop:
	VMOVUPS (SI), Y0
	VMOVUPS (BX), Y1
	VSUBPS Y9, Y0, Y0
	VMULPS Y10, Y1, Y2
	VSUBPS Y2, Y0, Y0
	VMULPS Y8, Y0, Y0
	VMOVUPS Y0, (DI)
	VMULPS Y11, Y0, Y0
	VMULPS Y12, Y1, Y1
	VADDPS Y1, Y0, Y0
	VADDPS Y13, Y0, Y0
	VMOVUPS Y0, (DX)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ tan32Loop
	VZEROUPPER
	RET

// func normRProj32(n int, h, rh, xh, rxh *float32, s, mh, mxh, mrxh, mrh, mxrh, sa float32)
TEXT ·normRProj32(SB), NOSPLIT, $0-68
	MOVQ n+0(FP), CX
	MOVQ h+8(FP), DI
	MOVQ rh+16(FP), DX
	MOVQ xh+24(FP), SI
	MOVQ rxh+32(FP), BX
	VBROADCASTSS s+40(FP), Y8
	VBROADCASTSS mh+44(FP), Y9
	VBROADCASTSS mxh+48(FP), Y10
	VBROADCASTSS mrxh+52(FP), Y11
	VBROADCASTSS mrh+56(FP), Y12
	VBROADCASTSS mxrh+60(FP), Y13
	VBROADCASTSS sa+64(FP), Y14
rproj32Loop:
	VMOVUPS (SI), Y0
	VMOVUPS (DI), Y1
	VSUBPS Y9, Y1, Y1
	VMULPS Y10, Y0, Y2
	VSUBPS Y2, Y1, Y1
	VMULPS Y8, Y1, Y1
	VMOVUPS Y1, (DI)
	VMOVUPS (DX), Y3
	VSUBPS Y12, Y3, Y3
	VMULPS Y0, Y13, Y4
	VSUBPS Y4, Y3, Y3
	VMULPS Y8, Y3, Y3
	VMULPS Y1, Y14, Y4
	VSUBPS Y4, Y3, Y3
	VMOVUPS (BX), Y5
	VMULPS Y10, Y5, Y5
	VMULPS Y11, Y0, Y6
	VADDPS Y6, Y5, Y5
	VMULPS Y8, Y5, Y5
	VSUBPS Y5, Y3, Y3
	VMOVUPS Y3, (DX)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ rproj32Loop
	VZEROUPPER
	RET

// func normTangentX32(n int, r, y, rx, x, xh *float32, mu, s, mr, a, gam, gu, bu float32)
// As normTangent, x̂ = (x − μ)·s formed from x and stored in xh.
TEXT ·normTangentX32(SB), NOSPLIT, $0-76
	MOVQ n+0(FP), CX
	MOVQ r+8(FP), DI
	MOVQ y+16(FP), DX
	MOVQ rx+24(FP), SI
	MOVQ x+32(FP), AX
	MOVQ xh+40(FP), BX
	VBROADCASTSS mu+48(FP), Y14
	VBROADCASTSS s+52(FP), Y8
	VBROADCASTSS mr+56(FP), Y9
	VBROADCASTSS a+60(FP), Y10
	VBROADCASTSS gam+64(FP), Y11
	VBROADCASTSS gu+68(FP), Y12
	VBROADCASTSS bu+72(FP), Y13
tanX32Loop:
	VMOVUPS (AX), Y1
	VSUBPS Y14, Y1, Y1
	VMULPS Y8, Y1, Y1
	VMOVUPS Y1, (BX)
	VMOVUPS (SI), Y0
	VSUBPS Y9, Y0, Y0
	VMULPS Y10, Y1, Y2
	VSUBPS Y2, Y0, Y0
	VMULPS Y8, Y0, Y0
	VMOVUPS Y0, (DI)
	VMULPS Y11, Y0, Y0
	VMULPS Y12, Y1, Y1
	VADDPS Y1, Y0, Y0
	VADDPS Y13, Y0, Y0
	VMOVUPS Y0, (DX)
	ADDQ $32, AX
	ADDQ $32, BX
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ tanX32Loop
	VZEROUPPER
	RET

// func normRProjG32(n int, gx, rgx, gy, rgy, xh, rxh *float32, gam, gu, s, mh, mxh, mrxh, mrh, mxrh, sa float32)
//
// normRProj32 with h = gy·γ and R{h} = gy·u_γ + rgy·γ formed again from
// gy and rgy (as rbackward's first sweep forms them, same operand order)
// and gx, R{gx} written to gx and rgx: for the sums eight groups at a
// time, which do not store h and R{h}.
TEXT ·normRProjG32(SB), NOSPLIT, $0-92
	MOVQ n+0(FP), CX
	MOVQ gx+8(FP), DI
	MOVQ rgx+16(FP), DX
	MOVQ gy+24(FP), AX
	MOVQ rgy+32(FP), R9
	MOVQ xh+40(FP), SI
	MOVQ rxh+48(FP), BX
	VBROADCASTSS gam+56(FP), Y15
	VBROADCASTSS gu+60(FP), Y7
	VBROADCASTSS s+64(FP), Y8
	VBROADCASTSS mh+68(FP), Y9
	VBROADCASTSS mxh+72(FP), Y10
	VBROADCASTSS mrxh+76(FP), Y11
	VBROADCASTSS mrh+80(FP), Y12
	VBROADCASTSS mxrh+84(FP), Y13
	VBROADCASTSS sa+88(FP), Y14
rprojG32Loop:
	VMOVUPS (AX), Y5
	VMOVUPS (R9), Y6
	VMULPS Y15, Y5, Y1
	VMULPS Y7, Y5, Y3
	VMULPS Y15, Y6, Y6
	VADDPS Y6, Y3, Y3
	VMOVUPS (SI), Y0
	VSUBPS Y9, Y1, Y1
	VMULPS Y10, Y0, Y2
	VSUBPS Y2, Y1, Y1
	VMULPS Y8, Y1, Y1
	VMOVUPS Y1, (DI)
	VSUBPS Y12, Y3, Y3
	VMULPS Y0, Y13, Y4
	VSUBPS Y4, Y3, Y3
	VMULPS Y8, Y3, Y3
	VMULPS Y1, Y14, Y4
	VSUBPS Y4, Y3, Y3
	VMOVUPS (BX), Y5
	VMULPS Y10, Y5, Y5
	VMULPS Y11, Y0, Y6
	VADDPS Y6, Y5, Y5
	VMULPS Y8, Y5, Y5
	VSUBPS Y5, Y3, Y3
	VMOVUPS Y3, (DX)
	ADDQ $32, AX
	ADDQ $32, R9
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ rprojG32Loop
	VZEROUPPER
	RET
