package offheap

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestAlloc: small arrays come from the heap; large ones are zeroed,
// writable, outside the heap (the heap does not grow by their size), and
// Free and a second Free are fine.
func TestAlloc(t *testing.T) {
	small, b := Alloc[float32](1000)
	if b != nil || len(small) != 1000 {
		t.Fatalf("a 4 kB array: block %v, length %d", b, len(small))
	}
	runtime.GC()
	before := heapObjects()
	n := Threshold / 4 * 3 // 48 MiB of float32
	big, b := Alloc[float32](n)
	if runtime.GOOS != "windows" && b == nil {
		t.Fatal("a 48 MiB array was not mapped")
	}
	if len(big) != n || cap(big) != n {
		t.Fatalf("length %d, capacity %d, want %d", len(big), cap(big), n)
	}
	for i := 0; i < n; i += 4096 {
		if big[i] != 0 {
			t.Fatalf("element %d is %v, want 0", i, big[i])
		}
		big[i] = float32(i)
	}
	if big[n-4096] != float32(n-4096) {
		t.Fatal("a write did not stick")
	}
	if b != nil {
		if grew := int64(heapObjects()) - int64(before); grew > 8<<20 {
			t.Errorf("the heap grew by %d MiB for a mapped array", grew>>20)
		}
	}
	// DropPages: the whole pages of the second half read zeros afterwards
	// (a private anonymous map), the first half keeps its values.
	if b != nil {
		for i := range big {
			big[i] = 1
		}
		b.DropPages(Bytes(big[n/2:]))
		if big[n/2-1] != 1 || big[n/2+1024] != 0 || big[n-1] != 0 {
			t.Errorf("after DropPages of the second half: %v %v %v, want 1 0 0", big[n/2-1], big[n/2+1024], big[n-1])
		}
	}
	runtime.KeepAlive(b)
	b.Free()
	b.Free()
	var none *Block
	none.Free()
}
