//go:build !unix

package memctl

func addressSpaceLimit() (int64, bool) { return 0, false }
