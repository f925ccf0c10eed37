//go:build amd64 && !purego

#include "textflag.h"

// func selectFullScalarAVX2(o, t *float32, c *bool, f float32, n int)
// o[i] = c[i] ? t[i] : f for i < n, n a multiple of 8.
TEXT ·selectFullScalarAVX2(SB), NOSPLIT, $0-40
	MOVQ o+0(FP), DI
	MOVQ t+8(FP), SI
	MOVQ c+16(FP), DX
	VBROADCASTSS f+24(FP), Y3
	MOVQ n+32(FP), CX
	SHRQ $3, CX
	JZ   fsdone
	VPXOR Y4, Y4, Y4
fsloop:
	VPMOVZXBD (DX), Y0    // eight 0/1 bytes → dwords
	VPSUBD Y0, Y4, Y0     // 0 − c: all ones where c
	VMOVUPS (SI), Y1
	VBLENDVPS Y0, Y1, Y3, Y2 // Y2 = sign(Y0) ? Y1 : Y3
	VMOVUPS Y2, (DI)
	ADDQ $8, DX
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  fsloop
	VZEROUPPER
fsdone:
	RET

// func selectFullFullAVX2(o, t, f *float32, c *bool, n int)
// o[i] = c[i] ? t[i] : f[i] for i < n, n a multiple of 8.
TEXT ·selectFullFullAVX2(SB), NOSPLIT, $0-40
	MOVQ o+0(FP), DI
	MOVQ t+8(FP), SI
	MOVQ f+16(FP), R8
	MOVQ c+24(FP), DX
	MOVQ n+32(FP), CX
	SHRQ $3, CX
	JZ   ffdone
	VPXOR Y4, Y4, Y4
ffloop:
	VPMOVZXBD (DX), Y0
	VPSUBD Y0, Y4, Y0
	VMOVUPS (SI), Y1
	VMOVUPS (R8), Y3
	VBLENDVPS Y0, Y1, Y3, Y2
	VMOVUPS Y2, (DI)
	ADDQ $8, DX
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, DI
	DECQ CX
	JNZ  ffloop
	VZEROUPPER
ffdone:
	RET

// func geScalarAVX2(dst *bool, x *float32, c float32, n int, table *[256]uint64)
// dst[i] = x[i] ≥ c (false for NaN: ordered, quiet) for i < n, n a
// multiple of 8: compare eight lanes, take the sign mask, expand its eight
// bits to eight bytes 0/1 through table.
TEXT ·geScalarAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSS c+16(FP), Y1
	MOVQ n+24(FP), CX
	MOVQ table+32(FP), R9
	SHRQ $3, CX
	JZ   gedone
geloop:
	VMOVUPS (SI), Y0
	VCMPPS $0x1d, Y1, Y0, Y2 // GE_OQ: x ≥ c
	VMOVMSKPS Y2, AX
	MOVQ (R9)(AX*8), BX
	MOVQ BX, (DI)
	ADDQ $32, SI
	ADDQ $8, DI
	DECQ CX
	JNZ  geloop
	VZEROUPPER
gedone:
	RET
