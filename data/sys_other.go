//go:build !(linux || darwin || freebsd)

package data

func diskFree(string) int64 { return -1 }
func physicalMemory() int64 { return 0 }

func statKey(string) (fileKey, bool) { return fileKey{}, false } // no cache: hash every open

func exchangeDirs(tmp, out string) (string, error) { return renameDirs(tmp, out) }
