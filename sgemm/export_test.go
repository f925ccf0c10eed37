package sgemm

import "testing"

// setAsm switches the assembly kernel for one test (not parallel-safe).
func setAsm(t *testing.T, on bool) {
	old := useAsm
	useAsm = on
	t.Cleanup(func() { useAsm = old })
}
