//go:build !(linux || darwin || freebsd)

package data

import "os"

func mapFile(*os.File, int64) ([]byte, error) { return nil, errNoMap }
func unmapFile([]byte)                        {}
func dropPages([]byte)                        {}
