package data

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A frame written a chunk at a time (its row column made per chunk) is
// the file WriteFrame writes for the whole frame, byte for byte, with the
// digest FrameSHA256 gives, across several record batches and for an
// empty frame.
func TestChunkedSameBytes(t *testing.T) {
	for _, n := range []int{0, 5, 2*maxBatchRows + 77} {
		whole := &Frame{Rows: n, LabelRR: make([]uint8, n), Row: make([]int64, n), Alpha: make([]float64, n)}
		for i := range n {
			whole.LabelRR[i], whole.Row[i], whole.Alpha[i] = uint8(i%3%2), int64(n-i), float64(i%7)/7
		}
		calls := 0
		c := Chunked{Rows: n, Chunk: func(lo, hi int) *Frame {
			calls++
			f := &Frame{Rows: hi - lo, LabelRR: whole.LabelRR[lo:hi], Alpha: whole.Alpha[lo:hi], Row: make([]int64, hi-lo)}
			for i := range f.Row {
				f.Row[i] = int64(n - lo - i)
			}
			return f
		}}
		md := map[string]string{"k": "v"}
		dir := t.TempDir()
		a, b := filepath.Join(dir, "whole.arrow"), filepath.Join(dir, "chunked.arrow")
		if err := WriteFrame(a, whole, md); err != nil {
			t.Fatal(err)
		}
		var sumWritten string
		if err := WriteChunkedAfter(b, c, md, func(s string) error { sumWritten = s; return nil }); err != nil {
			t.Fatal(err)
		}
		ba, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if !bytes.Equal(ba, bb) || len(ba) == 0 {
			t.Fatalf("%d rows: the chunked file (%d bytes) differs from the whole one (%d bytes)", n, len(bb), len(ba))
		}
		want, err := FrameSHA256(whole, md)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ChunkedSHA256(c, md)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || sumWritten != want {
			t.Fatalf("%d rows: digests %s (chunked), %s (written), want %s", n, got, sumWritten, want)
		}
		if n > maxBatchRows && calls < 2*3 {
			t.Fatalf("%d rows: %d chunks made, want one per record batch", n, calls)
		}
	}
}
