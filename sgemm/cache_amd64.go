//go:build amd64 && !purego

package sgemm

// cpuid executes CPUID with EAX = leaf, ECX = sub (cache_amd64.s).
//
//go:noescape
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// l2Bytes is the size of one core's L2 cache from CPUID leaf 0x80000006
// (ECX bits 31–16, in KiB; AMD and Intel both report it there), or 0 when
// the CPU does not say.
func l2Bytes() int {
	if max, _, _, _ := cpuid(0x80000000, 0); max < 0x80000006 {
		return 0
	}
	_, _, ecx, _ := cpuid(0x80000006, 0)
	return int(ecx>>16) << 10
}
