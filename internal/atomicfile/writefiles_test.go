package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// WriteFiles writes every file complete (in two folders, one created),
// sweeps the stale temporaries of exactly its targets as WriteFile would
// (a dead writer's, a two-day-old unowned one; not a live writer's, another
// host's or another target's, nor those of a target whose name holds
// ".tmp-"), leaves no temporary of its own, and reports a file it cannot
// write by name while writing the others.
func TestWriteFiles(t *testing.T) {
	host := strings.SplitN(Owner, "~", 2)[0]
	dead, live := deadPid(t), livePid(t)
	a := t.TempDir()
	b := filepath.Join(t.TempDir(), "new")
	tmp := func(dir, target, host string, pid int) string {
		return filepath.Join(dir, "."+target+".tmp-"+host+"~"+strconv.Itoa(pid)+"~7")
	}
	var paths []string
	var files [][]byte
	for i := range 40 {
		dir := a
		if i%2 == 1 {
			dir = b
		}
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("r%02d.json", i)))
		files = append(files, []byte(strings.Repeat(strconv.Itoa(i), 100+i)))
	}
	paths = append(paths, filepath.Join(a, "x.tmp-y.json")) // a target named like a temporary
	files = append(files, []byte("odd"))
	remove := []string{tmp(a, "r00.json", host, dead), tmp(a, "x.tmp-y.json", host, dead), filepath.Join(a, ".r02.json.tmp-3141592653")}
	keep := []string{tmp(a, "r00.json", host, live), tmp(a, "r00.json", "other-host", dead), tmp(a, "other.json", host, dead),
		tmp(a, "y.json", host, dead), filepath.Join(a, ".r04.json.tmp-2718281828")}
	for _, p := range append(append([]string{}, remove...), keep...) {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(remove[2], old, old)
	if err := WriteFiles(paths, files); err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		if got, err := os.ReadFile(p); err != nil || string(got) != string(files[i]) {
			t.Fatalf("%s: %q (%v), want %q", p, got, err, files[i])
		}
	}
	for _, p := range remove {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("stale %s was kept", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
	for _, dir := range []string{a, b} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-"+Owner) {
				t.Errorf("WriteFiles left its temporary %s", e.Name())
			}
		}
	}

	// A file that cannot be written is named; the others are written.
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	good := filepath.Join(t.TempDir(), "good.json")
	err := WriteFiles([]string{good, filepath.Join(blocker, "under-a-file.json")}, [][]byte{[]byte("g"), []byte("b")})
	if err == nil || !strings.Contains(err.Error(), "under-a-file.json") {
		t.Fatalf("err = %v, want one naming under-a-file.json", err)
	}
	if got, _ := os.ReadFile(good); string(got) != "g" {
		t.Fatalf("the writable file holds %q", got)
	}
}

// BenchmarkWriteResults writes 64 small files (a group's results) into a
// folder already holding 4,000 others, as WriteFile did one after another
// (each reading the folder for stale temporaries, each syncing alone) and
// as WriteFiles does.
func BenchmarkWriteResults(b *testing.B) {
	dir := b.TempDir()
	for i := range 4000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("old%05d.json", i)), []byte("{}"), 0o644)
	}
	paths, files := make([]string, 64), make([][]byte, 64)
	for i := range paths {
		paths[i], files[i] = filepath.Join(dir, fmt.Sprintf("new%02d.json", i)), []byte(strings.Repeat("x", 4000))
	}
	b.Run("WriteFile", func(b *testing.B) {
		for b.Loop() {
			for i, p := range paths {
				if err := WriteFile(p, files[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("WriteFiles", func(b *testing.B) {
		for b.Loop() {
			if err := WriteFiles(paths, files); err != nil {
				b.Fatal(err)
			}
		}
	})
}
