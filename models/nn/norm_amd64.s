#include "textflag.h"

// The group norm's elementwise passes, four values a step (norm_kernels.go
// has the same loops in Go and the formulas). Each value goes through the
// same operations, in the same order and rounding, as the scalar loop: no
// fused multiply-adds. Requires AVX; n counts groups of four, n ≥ 1.

// func normOut(n int, y, x *float64, mu, s, gam, b float64)
TEXT ·normOut(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ y+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSD mu+24(FP), Y8
	VBROADCASTSD s+32(FP), Y9
	VBROADCASTSD gam+40(FP), Y10
	VBROADCASTSD b+48(FP), Y11
outLoop:
	VMOVUPD (SI), Y0
	VSUBPD Y8, Y0, Y0
	VMULPD Y9, Y0, Y0
	VMULPD Y0, Y10, Y0
	VADDPD Y11, Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ outLoop
	VZEROUPPER
	RET

// func normProj(n int, h, x *float64, mu, s, mh, mxh float64)
TEXT ·normProj(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ h+8(FP), DI
	MOVQ x+16(FP), SI
	VBROADCASTSD mu+24(FP), Y8
	VBROADCASTSD s+32(FP), Y9
	VBROADCASTSD mh+40(FP), Y10
	VBROADCASTSD mxh+48(FP), Y11
projLoop:
	VMOVUPD (SI), Y0
	VSUBPD Y8, Y0, Y0
	VMULPD Y9, Y0, Y0
	VMULPD Y11, Y0, Y0
	VMOVUPD (DI), Y1
	VSUBPD Y10, Y1, Y1
	VSUBPD Y0, Y1, Y1
	VMULPD Y1, Y9, Y1
	VMOVUPD Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ projLoop
	VZEROUPPER
	RET

// func normTangent(n int, r, y, rx, xh *float64, s, mr, a, gam, gu, bu float64)
TEXT ·normTangent(SB), NOSPLIT, $0-88
	MOVQ n+0(FP), CX
	MOVQ r+8(FP), DI
	MOVQ y+16(FP), DX
	MOVQ rx+24(FP), SI
	MOVQ xh+32(FP), BX
	VBROADCASTSD s+40(FP), Y8
	VBROADCASTSD mr+48(FP), Y9
	VBROADCASTSD a+56(FP), Y10
	VBROADCASTSD gam+64(FP), Y11
	VBROADCASTSD gu+72(FP), Y12
	VBROADCASTSD bu+80(FP), Y13
tanLoop:
	VMOVUPD (SI), Y0
	VMOVUPD (BX), Y1
	VSUBPD Y9, Y0, Y0
	VMULPD Y10, Y1, Y2
	VSUBPD Y2, Y0, Y0
	VMULPD Y0, Y8, Y0
	VMOVUPD Y0, (DI)
	VMULPD Y0, Y11, Y0
	VMULPD Y1, Y12, Y1
	VADDPD Y1, Y0, Y0
	VADDPD Y13, Y0, Y0
	VMOVUPD Y0, (DX)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ tanLoop
	VZEROUPPER
	RET

// func normRProj(n int, h, rh, xh, rxh *float64, s, mh, mxh, mrxh, mrh, mxrh, sa float64)
TEXT ·normRProj(SB), NOSPLIT, $0-96
	MOVQ n+0(FP), CX
	MOVQ h+8(FP), DI
	MOVQ rh+16(FP), DX
	MOVQ xh+24(FP), SI
	MOVQ rxh+32(FP), BX
	VBROADCASTSD s+40(FP), Y8
	VBROADCASTSD mh+48(FP), Y9
	VBROADCASTSD mxh+56(FP), Y10
	VBROADCASTSD mrxh+64(FP), Y11
	VBROADCASTSD mrh+72(FP), Y12
	VBROADCASTSD mxrh+80(FP), Y13
	VBROADCASTSD sa+88(FP), Y14
rprojLoop:
	VMOVUPD (SI), Y0
	VMOVUPD (DI), Y1
	VSUBPD Y9, Y1, Y1
	VMULPD Y10, Y0, Y2
	VSUBPD Y2, Y1, Y1
	VMULPD Y1, Y8, Y1
	VMOVUPD Y1, (DI)
	VMOVUPD (DX), Y3
	VSUBPD Y12, Y3, Y3
	VMULPD Y13, Y0, Y4
	VSUBPD Y4, Y3, Y3
	VMULPD Y3, Y8, Y3
	VMULPD Y1, Y14, Y4
	VSUBPD Y4, Y3, Y3
	VMOVUPD (BX), Y5
	VMULPD Y10, Y5, Y5
	VMULPD Y11, Y0, Y6
	VADDPD Y6, Y5, Y5
	VMULPD Y5, Y8, Y5
	VSUBPD Y5, Y3, Y3
	VMOVUPD Y3, (DX)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ rprojLoop
	VZEROUPPER
	RET

// The passes that follow the eight-group sums form what those sums did
// not store (h = γ·gy, x̂) again from their inputs, with the same
// operations as the scalar loops.

// func normProjG(n int, gx, gy, x *float64, mu, s, gam, mh, mxh float64)
// gx = s·(γ·gy − mh − x̂·mxh), x̂ = (x − μ)·s.
TEXT ·normProjG(SB), NOSPLIT, $0-72
	MOVQ n+0(FP), CX
	MOVQ gx+8(FP), DI
	MOVQ gy+16(FP), DX
	MOVQ x+24(FP), SI
	VBROADCASTSD mu+32(FP), Y8
	VBROADCASTSD s+40(FP), Y9
	VBROADCASTSD gam+48(FP), Y12
	VBROADCASTSD mh+56(FP), Y10
	VBROADCASTSD mxh+64(FP), Y11
projGLoop:
	VMOVUPD (SI), Y0
	VSUBPD Y8, Y0, Y0
	VMULPD Y9, Y0, Y0
	VMULPD Y11, Y0, Y0
	VMOVUPD (DX), Y1
	VMULPD Y1, Y12, Y1
	VSUBPD Y10, Y1, Y1
	VSUBPD Y0, Y1, Y1
	VMULPD Y1, Y9, Y1
	VMOVUPD Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ projGLoop
	VZEROUPPER
	RET

// func normTangentX(n int, r, y, rx, x, xh *float64, mu, s, mr, a, gam, gu, bu float64)
// As normTangent, x̂ = (x − μ)·s formed from x and stored in xh.
TEXT ·normTangentX(SB), NOSPLIT, $0-104
	MOVQ n+0(FP), CX
	MOVQ r+8(FP), DI
	MOVQ y+16(FP), DX
	MOVQ rx+24(FP), SI
	MOVQ x+32(FP), AX
	MOVQ xh+40(FP), BX
	VBROADCASTSD mu+48(FP), Y14
	VBROADCASTSD s+56(FP), Y8
	VBROADCASTSD mr+64(FP), Y9
	VBROADCASTSD a+72(FP), Y10
	VBROADCASTSD gam+80(FP), Y11
	VBROADCASTSD gu+88(FP), Y12
	VBROADCASTSD bu+96(FP), Y13
tanXLoop:
	VMOVUPD (AX), Y1
	VSUBPD Y14, Y1, Y1
	VMULPD Y8, Y1, Y1
	VMOVUPD Y1, (BX)
	VMOVUPD (SI), Y0
	VSUBPD Y9, Y0, Y0
	VMULPD Y10, Y1, Y2
	VSUBPD Y2, Y0, Y0
	VMULPD Y0, Y8, Y0
	VMOVUPD Y0, (DI)
	VMULPD Y0, Y11, Y0
	VMULPD Y1, Y12, Y1
	VADDPD Y1, Y0, Y0
	VADDPD Y13, Y0, Y0
	VMOVUPD Y0, (DX)
	ADDQ $32, AX
	ADDQ $32, BX
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ tanXLoop
	VZEROUPPER
	RET
