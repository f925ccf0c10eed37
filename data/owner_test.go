package data

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"labelprivacy/internal/offheap"
)

// mappedFrame writes and reads back a frame whose 19 MB of features are
// mapped outside the heap (above offheap.Threshold).
func mappedFrame(t *testing.T) *Frame {
	t.Helper()
	const rows, d = 300_000, 16
	f := &Frame{Rows: rows, Features: SynthFeatureNames(d), X: make([]float32, rows*d), Label: make([]uint8, rows)}
	for i := range f.X {
		f.X[i] = float32(i % 1000)
	}
	path := filepath.Join(t.TempDir(), "train.arrow")
	if err := WriteFrame(path, f, nil); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFrame(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.mem.blocksOf()) == 0 {
		t.Skip("the features were not mapped here")
	}
	return g
}

func panicOf(fn func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	fn()
	return ""
}

// TestViewWithoutOwnerRefused: views made by the frame's methods carry its
// owner and pass; a frame or Features literal made of its raw slices (the
// shape of the issue-35 crash in release.Ship) is refused at once by every
// method that reads features, naming the rule.
func TestViewWithoutOwnerRefused(t *testing.T) {
	f := mappedFrame(t)
	defer f.Close()
	std, err := FitStandardizer(f)
	if err != nil {
		t.Fatal(err)
	}
	literal := &Frame{Rows: f.Rows, Features: f.Features, X: f.X}
	feats := &Features{Rows: f.Rows, Names: f.Features, X: f.X}
	for _, c := range []struct {
		name string
		fn   func()
		ok   bool
	}{
		{"Slice's features", func() { f.Slice(10, 20).FeaturesOnly().Take([]int{1}) }, true},
		{"a copy's features", func() { g := *f; g.FeaturesOnly().Take([]int{1}) }, true},
		{"FrameOf(FeaturesOnly)", func() { FrameOf(f.FeaturesOnly()).Take([]int{1}) }, true},
		{"Concat of views", func() { _, _ = Concat(f.FeaturesOnly().Slice(0, 5), f.FeaturesOnly()) }, true},
		{"literal FeaturesOnly", func() { literal.FeaturesOnly() }, false},
		{"literal Take", func() { literal.Take([]int{0}) }, false},
		{"literal Slice", func() { literal.Slice(0, 1) }, false},
		{"literal FitStandardizer", func() { _, _ = FitStandardizer(literal) }, false},
		{"literal Apply", func() { _, _ = std.Apply(literal) }, false},
		{"literal batch source", func() { _, _ = NewBatchSource(literal, BatchOptions{BatchSize: 8}) }, false},
		{"Features literal Take", func() { feats.Take([]int{0}) }, false},
		{"Features literal Concat", func() { _, _ = Concat(feats, f.FeaturesOnly()) }, false},
		{"Features literal FrameOf", func() { FrameOf(feats) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := panicOf(c.fn)
			switch {
			case c.ok && msg != "":
				t.Fatalf("refused: %s", msg)
			case !c.ok && !strings.Contains(msg, "does not carry"):
				t.Fatalf("panic %q, want the rule named", msg)
			}
		})
	}
	if err := feats.CheckMemory(); err == nil {
		t.Fatal("CheckMemory passed a Features literal over mapped memory")
	}
	runtime.KeepAlive(f)
}

// TestCloseOwnerOnly: Close of a view or of a copy frees nothing; the
// owner's Close frees its blocks once, and drops its arrays.
func TestCloseOwnerOnly(t *testing.T) {
	f := mappedFrame(t)
	live, owned := offheap.ReadStats().Live, len(f.mem.blocks)
	view, cp := f.Slice(0, 100), *f
	view.Close()
	cp.Close()
	if s := offheap.ReadStats(); s.Live != live || f.X == nil || view.X[5] != f.X[5] {
		t.Fatalf("Close of a view or a copy freed the owner's memory (%d live of %d)", s.Live, live)
	}
	f.Close()
	if s := offheap.ReadStats(); s.Live != live-owned {
		t.Fatalf("after the owner's Close %d blocks are live, want %d − %d", s.Live, live, owned)
	}
	if f.X != nil || f.Indices != nil || f.Offsets != nil {
		t.Fatal("a closed frame keeps its arrays")
	}
	f.Close()
	(*Frame)(nil).Close()
	(*Dataset)(nil).Close()
}
