//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 micro-kernels: tiles of 12×32, 12×16 and 6×32 floats of C held in
// zmm registers (Z8..Z31, one or two per row). Each computes, like
// kern6x16, Σ_k A(i,k)·B(k,j) in k order with fused multiply-adds starting
// from zero, so every element has the same bits as with the AVX2 kernel.
//
// Arguments (all counts in elements, scaled to bytes on entry):
//   A(i, k) = a + i·ars + k·aks for the first six rows; rows 6..11 start
//   apan further (two A panels). B(k, j) = b + k·bks + j for j < 16, and
//   B(k, 16+j) = b + bpan + k·bks + j (two B panels). C rows are ldc apart.
//
// Registers: CX steps left, SI/R10 rows 0 and 3 of A, R13/R14 rows 6 and 9,
// R9 ars, R11 aks, DI B, AX bpan, R12 bks, DX C, R8 ldc.

#define LOADARGS \
	MOVQ kb+0(FP), CX \
	MOVQ a+8(FP), SI \
	MOVQ ars+16(FP), R9 \
	SHLQ $2, R9 \
	MOVQ aks+24(FP), R11 \
	SHLQ $2, R11 \
	MOVQ apan+32(FP), R13 \
	SHLQ $2, R13 \
	ADDQ SI, R13 \
	MOVQ b+40(FP), DI \
	MOVQ bks+48(FP), R12 \
	SHLQ $2, R12 \
	MOVQ bpan+56(FP), AX \
	SHLQ $2, AX \
	MOVQ c+64(FP), DX \
	MOVQ ldc+72(FP), R8 \
	SHLQ $2, R8 \
	LEAQ (SI)(R9*2), R10 \
	ADDQ R9, R10 \
	LEAQ (R13)(R9*2), R14 \
	ADDQ R9, R14

// Three rows of A (at p, p+ars, p+2·ars) broadcast and multiplied into
// two registers each (32 columns).
#define ROWS3W(p, r0a, r0b, r1a, r1b, r2a, r2b) \
	VBROADCASTSS (p), Z2 \
	VBROADCASTSS (p)(R9*1), Z3 \
	VBROADCASTSS (p)(R9*2), Z4 \
	VFMADD231PS Z0, Z2, r0a \
	VFMADD231PS Z1, Z2, r0b \
	VFMADD231PS Z0, Z3, r1a \
	VFMADD231PS Z1, Z3, r1b \
	VFMADD231PS Z0, Z4, r2a \
	VFMADD231PS Z1, Z4, r2b

// Three rows into one register each (16 columns).
#define ROWS3N(p, r0, r1, r2) \
	VBROADCASTSS (p), Z2 \
	VBROADCASTSS (p)(R9*1), Z3 \
	VBROADCASTSS (p)(R9*2), Z4 \
	VFMADD231PS Z0, Z2, r0 \
	VFMADD231PS Z0, Z3, r1 \
	VFMADD231PS Z0, Z4, r2

#define STEP12x32 \
	VMOVUPS (DI), Z0 \
	VMOVUPS (DI)(AX*1), Z1 \
	ROWS3W(SI, Z8, Z9, Z10, Z11, Z12, Z13) \
	ROWS3W(R10, Z14, Z15, Z16, Z17, Z18, Z19) \
	ROWS3W(R13, Z20, Z21, Z22, Z23, Z24, Z25) \
	ROWS3W(R14, Z26, Z27, Z28, Z29, Z30, Z31) \
	ADDQ R11, SI \
	ADDQ R11, R10 \
	ADDQ R11, R13 \
	ADDQ R11, R14 \
	ADDQ R12, DI

#define STEP12x16 \
	VMOVUPS (DI), Z0 \
	ROWS3N(SI, Z8, Z9, Z10) \
	ROWS3N(R10, Z11, Z12, Z13) \
	ROWS3N(R13, Z14, Z15, Z16) \
	ROWS3N(R14, Z17, Z18, Z19) \
	ADDQ R11, SI \
	ADDQ R11, R10 \
	ADDQ R11, R13 \
	ADDQ R11, R14 \
	ADDQ R12, DI

#define STEP6x32 \
	VMOVUPS (DI), Z0 \
	VMOVUPS (DI)(AX*1), Z1 \
	ROWS3W(SI, Z8, Z9, Z10, Z11, Z12, Z13) \
	ROWS3W(R10, Z14, Z15, Z16, Z17, Z18, Z19) \
	ADDQ R11, SI \
	ADDQ R11, R10 \
	ADDQ R12, DI

// Zero n accumulators from Z8 on.
#define ZERO12 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19

#define ZERO24 \
	ZERO12 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27 \
	VPXORD Z28, Z28, Z28 \
	VPXORD Z29, Z29, Z29 \
	VPXORD Z30, Z30, Z30 \
	VPXORD Z31, Z31, Z31

// The k loop: four steps at a time, then the rest.
#define KLOOP(step, l4, l1, done) \
	MOVQ CX, BX \
	SHRQ $2, BX \
	ANDQ $3, CX \
	TESTQ BX, BX \
	JZ   l1 \
l4: \
	step \
	step \
	step \
	step \
	DECQ BX \
	JNZ  l4 \
l1: \
	TESTQ CX, CX \
	JZ   done \
	step \
	DECQ CX \
	JMP  l1

// Store a row of two (one) registers at DX, or add it to C there; advance DX.
#define ST2(lo, hi) \
	VMOVUPS lo, (DX) \
	VMOVUPS hi, 64(DX) \
	ADDQ R8, DX

#define AD2(lo, hi) \
	VADDPS (DX), lo, lo \
	VADDPS 64(DX), hi, hi \
	VMOVUPS lo, (DX) \
	VMOVUPS hi, 64(DX) \
	ADDQ R8, DX

#define ST1(r) \
	VMOVUPS r, (DX) \
	ADDQ R8, DX

#define AD1(r) \
	VADDPS (DX), r, r \
	VMOVUPS r, (DX) \
	ADDQ R8, DX

// func kern12x32(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc int, acc bool)
TEXT ·kern12x32(SB), NOSPLIT, $0-81
	LOADARGS
	ZERO24
	KLOOP(STEP12x32, k1232l4, k1232l1, k1232st)
k1232st:
	MOVBLZX acc+80(FP), BX
	TESTL BX, BX
	JNZ  k1232acc
	ST2(Z8, Z9)
	ST2(Z10, Z11)
	ST2(Z12, Z13)
	ST2(Z14, Z15)
	ST2(Z16, Z17)
	ST2(Z18, Z19)
	ST2(Z20, Z21)
	ST2(Z22, Z23)
	ST2(Z24, Z25)
	ST2(Z26, Z27)
	ST2(Z28, Z29)
	ST2(Z30, Z31)
	VZEROUPPER
	RET
k1232acc:
	AD2(Z8, Z9)
	AD2(Z10, Z11)
	AD2(Z12, Z13)
	AD2(Z14, Z15)
	AD2(Z16, Z17)
	AD2(Z18, Z19)
	AD2(Z20, Z21)
	AD2(Z22, Z23)
	AD2(Z24, Z25)
	AD2(Z26, Z27)
	AD2(Z28, Z29)
	AD2(Z30, Z31)
	VZEROUPPER
	RET

// func kern12x16(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc int, acc bool)
TEXT ·kern12x16(SB), NOSPLIT, $0-81
	LOADARGS
	ZERO12
	KLOOP(STEP12x16, k1216l4, k1216l1, k1216st)
k1216st:
	MOVBLZX acc+80(FP), BX
	TESTL BX, BX
	JNZ  k1216acc
	ST1(Z8)
	ST1(Z9)
	ST1(Z10)
	ST1(Z11)
	ST1(Z12)
	ST1(Z13)
	ST1(Z14)
	ST1(Z15)
	ST1(Z16)
	ST1(Z17)
	ST1(Z18)
	ST1(Z19)
	VZEROUPPER
	RET
k1216acc:
	AD1(Z8)
	AD1(Z9)
	AD1(Z10)
	AD1(Z11)
	AD1(Z12)
	AD1(Z13)
	AD1(Z14)
	AD1(Z15)
	AD1(Z16)
	AD1(Z17)
	AD1(Z18)
	AD1(Z19)
	VZEROUPPER
	RET

// func kern6x32(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc int, acc bool)
TEXT ·kern6x32(SB), NOSPLIT, $0-81
	LOADARGS
	ZERO12
	KLOOP(STEP6x32, k632l4, k632l1, k632st)
k632st:
	MOVBLZX acc+80(FP), BX
	TESTL BX, BX
	JNZ  k632acc
	ST2(Z8, Z9)
	ST2(Z10, Z11)
	ST2(Z12, Z13)
	ST2(Z14, Z15)
	ST2(Z16, Z17)
	ST2(Z18, Z19)
	VZEROUPPER
	RET
k632acc:
	AD2(Z8, Z9)
	AD2(Z10, Z11)
	AD2(Z12, Z13)
	AD2(Z14, Z15)
	AD2(Z16, Z17)
	AD2(Z18, Z19)
	VZEROUPPER
	RET
