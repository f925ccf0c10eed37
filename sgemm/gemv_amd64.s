//go:build amd64 && !purego

#include "textflag.h"

// The one-row and rank-one products of the logit layer (AVX2/FMA). Each
// element is the same chain of fused multiply-adds from zero as in the
// packed kernels (kernel_amd64.s), so the bits are the same.

// func outer(m, n int, a *float32, ars int, b *float32, c *float32, ldc int)
// C(i, j) = a[i·ars]·b[j] + 0 (one fused multiply-add from zero, as the
// kernels compute a K = 1 product) for i < m, j < n, C rows ldc apart
// (strides in elements). Registers: Y0 zero, Y1 a[i] broadcast, BX j.
TEXT ·outer(SB), NOSPLIT, $0-56
	MOVQ m+0(FP), CX
	MOVQ n+8(FP), R13
	MOVQ a+16(FP), SI
	MOVQ ars+24(FP), R9
	SHLQ $2, R9
	MOVQ b+32(FP), DI
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8
	VXORPS Y0, Y0, Y0
	TESTQ CX, CX
	JZ   outerdone

outerrow:
	VBROADCASTSS (SI), Y1
	XORQ BX, BX
	MOVQ R13, AX
	SUBQ $32, AX
	JL   outer8

outer32: // 32 columns at a time while j + 32 <= n
	VMOVUPS (DI)(BX*4), Y2
	VMOVUPS 32(DI)(BX*4), Y3
	VMOVUPS 64(DI)(BX*4), Y4
	VMOVUPS 96(DI)(BX*4), Y5
	VFMADD213PS Y0, Y1, Y2
	VFMADD213PS Y0, Y1, Y3
	VFMADD213PS Y0, Y1, Y4
	VFMADD213PS Y0, Y1, Y5
	VMOVUPS Y2, (DX)(BX*4)
	VMOVUPS Y3, 32(DX)(BX*4)
	VMOVUPS Y4, 64(DX)(BX*4)
	VMOVUPS Y5, 96(DX)(BX*4)
	ADDQ $32, BX
	CMPQ BX, AX
	JLE  outer32

outer8:
	MOVQ R13, AX
	SUBQ $8, AX

outer8loop:
	CMPQ BX, AX
	JG   outer1
	VMOVUPS (DI)(BX*4), Y2
	VFMADD213PS Y0, Y1, Y2
	VMOVUPS Y2, (DX)(BX*4)
	ADDQ $8, BX
	JMP  outer8loop

outer1:
	CMPQ BX, R13
	JGE  outernext
	VMOVSS (DI)(BX*4), X2
	VFMADD213SS X0, X1, X2
	VMOVSS X2, (DX)(BX*4)
	INCQ BX
	JMP  outer1

outernext:
	ADDQ R9, SI
	ADDQ R8, DX
	DECQ CX
	JNZ  outerrow
	VZEROUPPER

outerdone:
	RET

// One k step of gemv96: a[k] broadcast into Y12, times 96 floats of B's
// row k at DI, into Y0..Y11.
#define GEMVSTEP \
	VBROADCASTSS (SI), Y12 \
	VFMADD231PS (DI), Y12, Y0 \
	VFMADD231PS 32(DI), Y12, Y1 \
	VFMADD231PS 64(DI), Y12, Y2 \
	VFMADD231PS 96(DI), Y12, Y3 \
	VFMADD231PS 128(DI), Y12, Y4 \
	VFMADD231PS 160(DI), Y12, Y5 \
	VFMADD231PS 192(DI), Y12, Y6 \
	VFMADD231PS 224(DI), Y12, Y7 \
	VFMADD231PS 256(DI), Y12, Y8 \
	VFMADD231PS 288(DI), Y12, Y9 \
	VFMADD231PS 320(DI), Y12, Y10 \
	VFMADD231PS 352(DI), Y12, Y11 \
	ADDQ R11, SI \
	ADDQ R12, DI

// func gemv96(kb int, a *float32, aks int, b *float32, bks int, c *float32)
// c[j] = Σ_k a[k·aks]·b[k·bks + j] for j < 96, k < kb in k order, each a
// chain of fused multiply-adds from zero (twelve ymm accumulators, so the
// FMA units, not the chains' latency, set the pace).
TEXT ·gemv96(SB), NOSPLIT, $0-48
	MOVQ kb+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ aks+16(FP), R11
	SHLQ $2, R11
	MOVQ b+24(FP), DI
	MOVQ bks+32(FP), R12
	SHLQ $2, R12
	MOVQ c+40(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	TESTQ CX, CX
	JZ   gemv96st

gemv96loop:
	GEMVSTEP
	DECQ CX
	JNZ  gemv96loop

gemv96st:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	VMOVUPS Y8, 256(DX)
	VMOVUPS Y9, 288(DX)
	VMOVUPS Y10, 320(DX)
	VMOVUPS Y11, 352(DX)
	VZEROUPPER
	RET

// func gemv8(kb int, a *float32, aks int, b *float32, bks int, c *float32)
// gemv96 for 8 columns (one chain per column, bound by the FMA latency:
// only for rows narrower than 96).
TEXT ·gemv8(SB), NOSPLIT, $0-48
	MOVQ kb+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ aks+16(FP), R11
	SHLQ $2, R11
	MOVQ b+24(FP), DI
	MOVQ bks+32(FP), R12
	SHLQ $2, R12
	MOVQ c+40(FP), DX
	VXORPS Y0, Y0, Y0
	TESTQ CX, CX
	JZ   gemv8st

gemv8loop:
	VBROADCASTSS (SI), Y12
	VFMADD231PS (DI), Y12, Y0
	ADDQ R11, SI
	ADDQ R12, DI
	DECQ CX
	JNZ  gemv8loop

gemv8st:
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET
