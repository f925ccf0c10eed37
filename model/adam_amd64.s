//go:build amd64 && !purego

#include "textflag.h"

// func adamAVX2(p, m, v, grad *float32, n int, c *[8]float32)
// Eight lanes of adamRange (adam_host.go) per iteration, the same float32
// operations in the same order (no fused multiply-add): n a multiple of 8;
// c = {β1, 1−β1, β2, 1−β2, s, vs, ε}.
TEXT ·adamAVX2(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ grad+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	VBROADCASTSS 0(AX), Y8   // β1
	VBROADCASTSS 4(AX), Y9   // 1−β1
	VBROADCASTSS 8(AX), Y10  // β2
	VBROADCASTSS 12(AX), Y11 // 1−β2
	VBROADCASTSS 16(AX), Y12 // s
	VBROADCASTSS 20(AX), Y13 // vs
	VBROADCASTSS 24(AX), Y14 // ε
	SHRQ $3, CX
	JZ   done
loop:
	VMOVUPS (R8), Y0         // g
	VMULPS (SI), Y8, Y1      // m·β1
	VMULPS Y0, Y9, Y2        // g·(1−β1)
	VADDPS Y2, Y1, Y1        // m'
	VMOVUPS Y1, (SI)
	VMULPS Y0, Y0, Y3        // g²
	VMULPS Y3, Y11, Y3       // g²·(1−β2)
	VMULPS (DX), Y10, Y4     // v·β2
	VADDPS Y3, Y4, Y4        // v'
	VMOVUPS Y4, (DX)
	VSQRTPS Y4, Y5           // √v'
	VMULPS Y5, Y13, Y5       // √v'·vs
	VADDPS Y14, Y5, Y5       // + ε
	VMULPS Y1, Y12, Y6       // m'·s
	VDIVPS Y5, Y6, Y6        // (m'·s)/(√v'·vs + ε)
	VMOVUPS (DI), Y7
	VSUBPS Y6, Y7, Y7        // θ − step
	VMOVUPS Y7, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	DECQ CX
	JNZ  loop
	VZEROUPPER
done:
	RET

// func lazyAdamAVX2(p, m, v, grad *float32, n int, c *[8]float32)
// Eight lanes of hostEmbedding.adamRows' loop, the same float32 operations
// in the same order: n a multiple of 8; c = {1−β1, 1−β2, s, vs, ε}.
TEXT ·lazyAdamAVX2(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ grad+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ c+40(FP), AX
	VBROADCASTSS 0(AX), Y8   // 1−β1
	VBROADCASTSS 4(AX), Y9   // 1−β2
	VBROADCASTSS 8(AX), Y10  // s
	VBROADCASTSS 12(AX), Y11 // vs
	VBROADCASTSS 16(AX), Y12 // ε
	SHRQ $3, CX
	JZ   lzdone
lzloop:
	VMOVUPS (R8), Y0         // g
	VMOVUPS (SI), Y1         // m
	VSUBPS Y1, Y0, Y2        // g − m
	VMULPS Y2, Y8, Y2        // dm
	VADDPS Y2, Y1, Y1        // m' = m + dm
	VMOVUPS Y1, (SI)
	VMOVUPS (DX), Y3         // v
	VMULPS Y0, Y0, Y4        // g²
	VSUBPS Y3, Y4, Y4        // g² − v
	VMULPS Y4, Y9, Y4        // dv
	VADDPS Y4, Y3, Y3        // v' = v + dv
	VMOVUPS Y3, (DX)
	VSQRTPS Y3, Y5
	VMULPS Y5, Y11, Y5       // √v'·vs
	VADDPS Y12, Y5, Y5       // + ε
	VMULPS Y1, Y10, Y6       // s·m'
	VDIVPS Y5, Y6, Y6
	VMOVUPS (DI), Y7
	VSUBPS Y6, Y7, Y7
	VMOVUPS Y7, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	DECQ CX
	JNZ  lzloop
	VZEROUPPER
lzdone:
	RET
