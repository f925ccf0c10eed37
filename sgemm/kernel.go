package sgemm

import (
	"fmt"
)

// Kernel is a micro-kernel implementation. Every kernel computes each
// element of C the same way (see the package doc), so they give the same
// bits; they differ in speed and in the CPUs that run them.
type Kernel int

const (
	// KernelGo is the portable kernel (plain Go, a 6×16 tile).
	KernelGo Kernel = iota + 1
	// KernelAVX2 is the 6×16 AVX2/FMA assembly kernel (12 ymm accumulators).
	KernelAVX2
	// KernelAVX512 is the 12×32 AVX-512 assembly kernel (24 zmm
	// accumulators; 12×16 and 6×32 at the edges, AVX2's 6×16 in a corner).
	KernelAVX512
)

var kernelNames = map[Kernel]string{KernelGo: "go", KernelAVX2: "avx2", KernelAVX512: "avx512"}

// String is the kernel's name: "go", "avx2" or "avx512".
func (k Kernel) String() string {
	if n, ok := kernelNames[k]; ok {
		return n
	}
	return fmt.Sprintf("Kernel(%d)", int(k))
}

// ParseKernel returns the kernel called name ("go", "avx2", "avx512").
func ParseKernel(name string) (Kernel, error) {
	for k, n := range kernelNames {
		if n == name {
			return k, nil
		}
	}
	return 0, fmt.Errorf("sgemm: unknown kernel %q (want go, avx2 or avx512)", name)
}

// Available reports whether this CPU and build run kernel k: KernelGo
// always; KernelAVX2 on amd64 with AVX2 and FMA (and an OS that saves the
// ymm registers); KernelAVX512 where AVX-512F is there too. The build tag
// purego leaves only KernelGo.
func (k Kernel) Available() bool {
	switch k {
	case KernelGo:
		return true
	case KernelAVX2:
		return hasAVX2
	case KernelAVX512:
		return hasAVX512
	}
	return false
}

// Best is the fastest available kernel: avx512, else avx2, else go.
func Best() Kernel {
	switch {
	case hasAVX512:
		return KernelAVX512
	case hasAVX2:
		return KernelAVX2
	}
	return KernelGo
}

// Kernels lists the available kernels, fastest first.
func Kernels() []Kernel {
	var ks []Kernel
	for _, k := range []Kernel{KernelAVX512, KernelAVX2, KernelGo} {
		if k.Available() {
			ks = append(ks, k)
		}
	}
	return ks
}

// HasAVX2 reports whether the AVX2/FMA assembly kernel is available
// (amd64 CPUs with AVX2, FMA and an OS that saves the ymm registers).
func HasAVX2() bool { return hasAVX2 }

// HasAVX512 reports whether the AVX-512 kernel is available.
func HasAVX512() bool { return hasAVX512 }

// tile is the kernel's register tile in A panels (mr rows) and B panels
// (nr columns).
func (k Kernel) tile() (rp, cp int) {
	if k == KernelAVX512 {
		return 2, 2
	}
	return 1, 1
}

// kernel computes a strip of tiles (rp·mr)×(cp·nr) tiles down C: tile t
// is Σ_k A(t·rp·mr + i, k)·B(k, j) (k < kb, in k order, fused multiply-adds
// from zero), stored to c[(t·rp·mr + i)·ldc + j], or added there when acc.
// A's panels lie apan elements apart, A(i, k) = a[(i/mr)·apan + (i%mr)·ars
// + k·aks]; B(k,j) = b[(j/nr)·bpan + k·bks + j%nr]; rp, cp ∈ {1, 2} (1 and
// 1 for the go and avx2 kernels). One call walks every A panel of a block
// against the same B panels (still in L1), so the Go bookkeeping is paid
// per strip, not per tile. The callers' slicing makes a, b and c long
// enough (checked here once more before the assembly).
func kernel(kern Kernel, kb int, a []float32, ars, aks, apan, rp int, b []float32, bks, bpan, cp int, c []float32, ldc, tiles int, acc bool) {
	if tiles <= 0 {
		return
	}
	_ = a[(tiles*rp-1)*apan+(mr-1)*ars+(kb-1)*aks]
	_ = b[(cp-1)*bpan+(kb-1)*bks+nr-1]
	_ = c[(tiles*rp*mr-1)*ldc+cp*nr-1]
	switch {
	case kern == KernelGo:
		for t := range tiles {
			for g := range rp {
				for h := range cp {
					p := t*rp + g
					kernelGo(kb, a[p*apan:], ars, aks, b[h*bpan:], bks, c[p*mr*ldc+h*nr:], ldc, acc)
				}
			}
		}
	case rp == 2 && cp == 2:
		kern12x32(kb, &a[0], ars, aks, apan, &b[0], bks, bpan, &c[0], ldc, tiles, acc)
	case rp == 2:
		kern12x16(kb, &a[0], ars, aks, apan, &b[0], bks, bpan, &c[0], ldc, tiles, acc)
	case cp == 2:
		kern6x32(kb, &a[0], ars, aks, apan, &b[0], bks, bpan, &c[0], ldc, tiles, acc)
	default:
		kern6x16(kb, &a[0], ars, aks, apan, &b[0], bks, &c[0], ldc, tiles, acc)
	}
}

// kernelGo is the portable micro-kernel.
func kernelGo(kb int, a []float32, ars, aks int, b []float32, bks int, c []float32, ldc int, acc bool) {
	var t [mr][nr]float32
	for k := range kb {
		bk := (*[nr]float32)(b[k*bks : k*bks+nr])
		for i := range mr {
			ai, ti := a[i*ars+k*aks], &t[i]
			for j, bj := range bk {
				ti[j] += ai * bj
			}
		}
	}
	for i := range mr {
		row := (*[nr]float32)(c[i*ldc : i*ldc+nr])
		if acc {
			for j := range nr {
				row[j] += t[i][j]
			}
		} else {
			*row = t[i]
		}
	}
}
