package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --cpuprofile and --memprofile write pprof profiles (gzipped protobuf) of a
// config command; an unwritable profile fails before any work, naming the
// flag.
func TestProfileFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	envm := map[string]string{"TRAIN_OUTPUT": filepath.Join(dir, "o"), "TRAIN_DATA_SYNTH_ROWS": "2000", "TRAIN_DATA_SYNTH_TEST_ROWS": "500",
		"TRAIN_TRAIN_BATCH_SIZE": "256", "TRAIN_PETS": "[{mechanism: none}]"}
	if _, err := cli(t, envm, "run", "--cpuprofile", cpu, "--memprofile", mem); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s is not a gzipped pprof profile: %v", p, err)
		}
		raw, err := io.ReadAll(zr)
		if err != nil || len(raw) < 100 {
			t.Fatalf("%s: %d bytes of profile (%v)", p, len(raw), err)
		}
		if p == mem && !bytes.Contains(raw, []byte("alloc_space")) {
			t.Fatalf("%s holds no alloc_space samples", p)
		}
	}
	bad := filepath.Join(dir, "missing", "cpu.pprof")
	_, err := cli(t, map[string]string{"TRAIN_OUTPUT": filepath.Join(dir, "o2")}, "run", "--cpuprofile", bad)
	if err == nil || !strings.Contains(err.Error(), "--cpuprofile") {
		t.Fatalf("unwritable --cpuprofile: err = %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "o2")); serr == nil {
		t.Fatal("the run started although its profile could not be written")
	}
}
