//go:build darwin || freebsd

package data

func physicalMemory() int64 { return 0 }

func statKey(string) (fileKey, bool) { return fileKey{}, false } // no cache: hash every open

func exchangeDirs(tmp, out string) (string, error) { return renameDirs(tmp, out) }
