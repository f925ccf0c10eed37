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
//   Each call walks a strip of `tiles` tiles down C against the same B:
//   tile t reads the A panels starting t·rp·apan after a (rp = 2 for the
//   12-row tiles, 1 for 6×32) and writes C rows t·rp·6 on.
//
// Registers: CX steps left, SI/R10 rows 0 and 3 of A, R13/R14 rows 6 and 9,
// R9 ars, R11 aks, DI B, AX bpan, R12 bks, DX C, R8 ldc, R15 the tile's A.
// tiles+80(FP) counts the tiles left.

#define LOADARGS \
	MOVQ a+8(FP), R15 \
	MOVQ ars+16(FP), R9 \
	SHLQ $2, R9 \
	MOVQ aks+24(FP), R11 \
	SHLQ $2, R11 \
	MOVQ bks+48(FP), R12 \
	SHLQ $2, R12 \
	MOVQ bpan+56(FP), AX \
	SHLQ $2, AX \
	MOVQ c+64(FP), DX \
	MOVQ ldc+72(FP), R8 \
	SHLQ $2, R8

// The start of a tile: A's row pointers from R15, B and the step count
// from the arguments.
#define TILESTART \
	MOVQ kb+0(FP), CX \
	MOVQ b+40(FP), DI \
	MOVQ R15, SI \
	MOVQ apan+32(FP), R13 \
	SHLQ $2, R13 \
	ADDQ SI, R13 \
	LEAQ (SI)(R9*2), R10 \
	ADDQ R9, R10 \
	LEAQ (R13)(R9*2), R14 \
	ADDQ R9, R14

// The end of a tile: R15 moves rp A panels on (DX is at the next tile's C
// already); loop while tiles are left.
#define TILENEXT(rp, label) \
	MOVQ apan+32(FP), BX \
	SHLQ $(2+rp-1), BX \
	ADDQ BX, R15 \
	DECQ tiles+80(FP) \
	JNZ  label

// Prefetch n rows of C from DX on (BX): 32 floats a row (128 bytes, two
// or three cache lines) or 16 (one or two).
#define PFROW32 \
	PREFETCHT0 (BX) \
	PREFETCHT0 64(BX) \
	PREFETCHT0 124(BX) \
	ADDQ R8, BX

#define PFROW16 \
	PREFETCHT0 (BX) \
	PREFETCHT0 60(BX) \
	ADDQ R8, BX

#define PF6(row) \
	row \
	row \
	row \
	row \
	row \
	row

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

// func kern12x32(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool)
TEXT ·kern12x32(SB), NOSPLIT, $0-89
	LOADARGS
	CMPQ tiles+80(FP), $0
	JEQ  kern12x32done
kern12x32tile:
	TILESTART
	MOVQ DX, BX
	PF6(PFROW32)
	PF6(PFROW32)
	ZERO24
	KLOOP(STEP12x32, kern12x32l4, kern12x32l1, kern12x32st)
kern12x32st:
	MOVBLZX acc+88(FP), BX
	TESTL BX, BX
	JNZ  kern12x32acc
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
	JMP  kern12x32next
kern12x32acc:
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
kern12x32next:
	TILENEXT(2, kern12x32tile)
	VZEROUPPER
kern12x32done:
	RET

// func kern12x16(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool)
TEXT ·kern12x16(SB), NOSPLIT, $0-89
	LOADARGS
	CMPQ tiles+80(FP), $0
	JEQ  kern12x16done
kern12x16tile:
	TILESTART
	MOVQ DX, BX
	PF6(PFROW16)
	PF6(PFROW16)
	ZERO12
	KLOOP(STEP12x16, kern12x16l4, kern12x16l1, kern12x16st)
kern12x16st:
	MOVBLZX acc+88(FP), BX
	TESTL BX, BX
	JNZ  kern12x16acc
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
	JMP  kern12x16next
kern12x16acc:
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
kern12x16next:
	TILENEXT(2, kern12x16tile)
	VZEROUPPER
kern12x16done:
	RET

// func kern6x32(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool)
TEXT ·kern6x32(SB), NOSPLIT, $0-89
	LOADARGS
	CMPQ tiles+80(FP), $0
	JEQ  kern6x32done
kern6x32tile:
	TILESTART
	MOVQ DX, BX
	PF6(PFROW32)
	ZERO12
	KLOOP(STEP6x32, kern6x32l4, kern6x32l1, kern6x32st)
kern6x32st:
	MOVBLZX acc+88(FP), BX
	TESTL BX, BX
	JNZ  kern6x32acc
	ST2(Z8, Z9)
	ST2(Z10, Z11)
	ST2(Z12, Z13)
	ST2(Z14, Z15)
	ST2(Z16, Z17)
	ST2(Z18, Z19)
	JMP  kern6x32next
kern6x32acc:
	AD2(Z8, Z9)
	AD2(Z10, Z11)
	AD2(Z12, Z13)
	AD2(Z14, Z15)
	AD2(Z16, Z17)
	AD2(Z18, Z19)
kern6x32next:
	TILENEXT(1, kern6x32tile)
	VZEROUPPER
kern6x32done:
	RET
