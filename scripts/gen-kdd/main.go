// Command gen-kdd writes a KDD Cup 2012 (track 2)-shaped libsvm file to
// stdout, for measuring imports at the paper's scale without
// the real 149M-row file: labels 0/1 with P(1) = 0.044 (the real click
// rate), and 11 binary features per row out of 54,686,452 dimensions, one
// per "field" (the dimensions split into 11 equal ranges), Zipf-distributed
// within its field (s = 1.2) as the real ids (users, ads, queries) are
// heavy-tailed; indices are ascending, as in the libsvm collection's file.
// Deterministic for a seed.
//
//	go run ./scripts/gen-kdd -rows 10000000 | bzip2 -9 > /tmp/kdd.bz2
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
)

const (
	dims    = 54_686_452
	fields  = 11
	posRate = 0.044
)

func main() {
	rows := flag.Int("rows", 10_000_000, "rows to write")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	r := rand.New(rand.NewPCG(*seed, 0x6b6464))
	width := uint64(dims / fields)
	zipf := rand.NewZipf(r, 1.2, 1, width-1)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	line := make([]byte, 0, 256)
	for range *rows {
		line = line[:0]
		if r.Float64() < posRate {
			line = append(line, '1')
		} else {
			line = append(line, '0')
		}
		for f := range uint64(fields) {
			line = append(line, ' ')
			line = strconv.AppendUint(line, f*width+zipf.Uint64()+1, 10)
			line = append(line, ":1"...)
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			fmt.Fprintln(os.Stderr, "gen-kdd:", err)
			os.Exit(1)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "gen-kdd:", err)
		os.Exit(1)
	}
}
