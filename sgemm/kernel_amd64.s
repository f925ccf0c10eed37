//go:build amd64 && !purego

#include "textflag.h"

// One step of the contraction: Y0, Y1 = 16 floats of B at DI; the six
// floats of A, at SI, SI+R9, SI+2·R9, R10, R10+R9, R10+2·R9, are each
// broadcast and multiplied into a row of the tile (Y4..Y15, two registers
// per row); then A's pointers advance by R11 and B's by R12 (bytes).
#define STEP \
	VMOVUPS (DI), Y0 \
	VMOVUPS 32(DI), Y1 \
	VBROADCASTSS (SI), Y2 \
	VBROADCASTSS (SI)(R9*1), Y3 \
	VFMADD231PS Y0, Y2, Y4 \
	VFMADD231PS Y1, Y2, Y5 \
	VFMADD231PS Y0, Y3, Y6 \
	VFMADD231PS Y1, Y3, Y7 \
	VBROADCASTSS (SI)(R9*2), Y2 \
	VBROADCASTSS (R10), Y3 \
	VFMADD231PS Y0, Y2, Y8 \
	VFMADD231PS Y1, Y2, Y9 \
	VFMADD231PS Y0, Y3, Y10 \
	VFMADD231PS Y1, Y3, Y11 \
	VBROADCASTSS (R10)(R9*1), Y2 \
	VBROADCASTSS (R10)(R9*2), Y3 \
	VFMADD231PS Y0, Y2, Y12 \
	VFMADD231PS Y1, Y2, Y13 \
	VFMADD231PS Y0, Y3, Y14 \
	VFMADD231PS Y1, Y3, Y15 \
	ADDQ R11, SI \
	ADDQ R11, R10 \
	ADDQ R12, DI

// Store (or add into) one row of the tile at DX, then advance DX a row.
#define STORE(lo, hi) \
	VMOVUPS lo, (DX) \
	VMOVUPS hi, 32(DX) \
	ADDQ R8, DX

#define ADDSTORE(lo, hi) \
	VADDPS (DX), lo, lo \
	VADDPS 32(DX), hi, hi \
	VMOVUPS lo, (DX) \
	VMOVUPS hi, 32(DX) \
	ADDQ R8, DX

// Prefetch the six rows of C's tile at DX (16 floats a row, which may
// straddle two cache lines) while the contraction runs: AX, R8 ldc (bytes).
#define PREFETCHC6 \
	LEAQ (DX)(R8*2), AX \
	ADDQ R8, AX \
	PREFETCHT0 (DX) \
	PREFETCHT0 60(DX) \
	PREFETCHT0 (DX)(R8*1) \
	PREFETCHT0 60(DX)(R8*1) \
	PREFETCHT0 (DX)(R8*2) \
	PREFETCHT0 60(DX)(R8*2) \
	PREFETCHT0 (AX) \
	PREFETCHT0 60(AX) \
	PREFETCHT0 (AX)(R8*1) \
	PREFETCHT0 60(AX)(R8*1) \
	PREFETCHT0 (AX)(R8*2) \
	PREFETCHT0 60(AX)(R8*2)

// func kern6x16(kb int, a *float32, ars, aks, apan int, b *float32, bks int, c *float32, ldc, tiles int, acc bool)
// A strip of `tiles` 6×16 tiles down C against one B panel: tile t's A
// element (i, k) is at a + t·apan + i·ars + k·aks (in elements), B's 16
// floats of row k at b + k·bks; it writes (or with acc adds to) C rows
// 6t..6t+5, rows ldc apart. Registers: R14 tiles left, R13 the step from the end of
// one tile's A to the start of the next (apan − kb·aks, bytes).
TEXT ·kern6x16(SB), NOSPLIT, $0-81
	MOVQ a+8(FP), SI
	MOVQ ars+16(FP), R9
	SHLQ $2, R9
	MOVQ aks+24(FP), R11
	SHLQ $2, R11
	MOVQ apan+32(FP), R13
	SHLQ $2, R13
	MOVQ kb+0(FP), AX
	IMULQ R11, AX
	SUBQ AX, R13
	MOVQ bks+48(FP), R12
	SHLQ $2, R12
	MOVQ c+56(FP), DX
	MOVQ ldc+64(FP), R8
	SHLQ $2, R8
	MOVQ tiles+72(FP), R14
	TESTQ R14, R14
	JZ   done

tile:
	MOVQ kb+0(FP), CX
	MOVQ b+40(FP), DI
	LEAQ (SI)(R9*2), R10
	ADDQ R9, R10 // row 3
	PREFETCHC6

	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

	MOVQ CX, BX
	SHRQ $2, BX // steps of four
	ANDQ $3, CX // remainder
	TESTQ BX, BX
	JZ   tail

loop4:
	STEP
	STEP
	STEP
	STEP
	DECQ BX
	JNZ  loop4

tail:
	TESTQ CX, CX
	JZ   store

loop1:
	STEP
	DECQ CX
	JNZ  loop1

store:
	MOVBLZX acc+80(FP), AX
	TESTL AX, AX
	JNZ  accumulate
	STORE(Y4, Y5)
	STORE(Y6, Y7)
	STORE(Y8, Y9)
	STORE(Y10, Y11)
	STORE(Y12, Y13)
	STORE(Y14, Y15)
	JMP  next

accumulate:
	ADDSTORE(Y4, Y5)
	ADDSTORE(Y6, Y7)
	ADDSTORE(Y8, Y9)
	ADDSTORE(Y10, Y11)
	ADDSTORE(Y12, Y13)
	ADDSTORE(Y14, Y15)

next:
	ADDQ R13, SI // the next tile's A; DX is at its C already
	DECQ R14
	JNZ  tile
	VZEROUPPER

done:
	RET

// func copyRows16(dst, src *float32, ld, n int)
// dst[i·16 : i·16+16] = src[i·ld : i·ld+16] for i < n (ld in elements).
TEXT ·copyRows16(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $2, R8
	MOVQ n+24(FP), CX
	TESTQ CX, CX
	JZ   done16
loop16:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop16
	VZEROUPPER
done16:
	RET

// func copyRows6(dst, src *float32, ld, n int)
// dst[i·6 : i·6+6] = src[i·ld : i·ld+6] for i < n (ld in elements).
TEXT ·copyRows6(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $2, R8
	MOVQ n+24(FP), CX
	TESTQ CX, CX
	JZ   done6
loop6:
	MOVUPS (SI), X0
	MOVQ 16(SI), X1
	MOVUPS X0, (DI)
	MOVQ X1, 16(DI)
	ADDQ R8, SI
	ADDQ $24, DI
	DECQ CX
	JNZ  loop6
done6:
	RET

// func dot12(kb int, a *float32, aks int, b *float32, bcs int, c *float32)
// c[j] = Σ_k a[k·aks]·b[j·bcs + k] for j < 12, k < kb in k order, each a
// chain of scalar fused multiply-adds from zero: the same value as element
// j of kern6x16's tile for these operands. Registers: X0..X11 the sums,
// X12 a[k]; DI, R10, R13, R14 columns 0, 3, 6 and 9 of B, R9 bcs (bytes).
TEXT ·dot12(SB), NOSPLIT, $0-48
	MOVQ kb+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ aks+16(FP), R11
	SHLQ $2, R11
	MOVQ b+24(FP), DI
	MOVQ bcs+32(FP), R9
	SHLQ $2, R9
	MOVQ c+40(FP), DX
	LEAQ (DI)(R9*2), R10
	ADDQ R9, R10
	LEAQ (R10)(R9*2), R13
	ADDQ R9, R13
	LEAQ (R13)(R9*2), R14
	ADDQ R9, R14
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	VXORPS X4, X4, X4
	VXORPS X5, X5, X5
	VXORPS X6, X6, X6
	VXORPS X7, X7, X7
	VXORPS X8, X8, X8
	VXORPS X9, X9, X9
	VXORPS X10, X10, X10
	VXORPS X11, X11, X11
dotloop:
	VMOVSS (SI), X12
	VFMADD231SS (DI), X12, X0
	VFMADD231SS (DI)(R9*1), X12, X1
	VFMADD231SS (DI)(R9*2), X12, X2
	VFMADD231SS (R10), X12, X3
	VFMADD231SS (R10)(R9*1), X12, X4
	VFMADD231SS (R10)(R9*2), X12, X5
	VFMADD231SS (R13), X12, X6
	VFMADD231SS (R13)(R9*1), X12, X7
	VFMADD231SS (R13)(R9*2), X12, X8
	VFMADD231SS (R14), X12, X9
	VFMADD231SS (R14)(R9*1), X12, X10
	VFMADD231SS (R14)(R9*2), X12, X11
	ADDQ R11, SI
	ADDQ $4, DI
	ADDQ $4, R10
	ADDQ $4, R13
	ADDQ $4, R14
	DECQ CX
	JNZ  dotloop
	VMOVSS X0, (DX)
	VMOVSS X1, 4(DX)
	VMOVSS X2, 8(DX)
	VMOVSS X3, 12(DX)
	VMOVSS X4, 16(DX)
	VMOVSS X5, 20(DX)
	VMOVSS X6, 24(DX)
	VMOVSS X7, 28(DX)
	VMOVSS X8, 32(DX)
	VMOVSS X9, 36(DX)
	VMOVSS X10, 40(DX)
	VMOVSS X11, 44(DX)
	VZEROUPPER
	RET
