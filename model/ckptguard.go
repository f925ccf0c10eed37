package model

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// GoMLX (v0.26) writes a checkpoint's .bin and .json in place, so a process
// killed while saving leaves a truncated newest checkpoint that the next run
// fails to load ("read gzip header: EOF"). pruneIncompleteCheckpoints moves
// such checkpoints into dir/incomplete/ before GoMLX lists the directory, so
// a resumed run falls back to the last complete checkpoint. Only the newest
// checkpoints can be incomplete: a save that was interrupted is the last one.
func pruneIncompleteCheckpoints(dir string) (moved []string, err error) {
	jsons, err := filepath.Glob(filepath.Join(dir, "checkpoint-*.json"))
	if err != nil {
		return nil, err
	}
	bins, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*.bin"))
	bases := map[string]bool{}
	for _, p := range append(jsons, bins...) {
		bases[strings.TrimSuffix(strings.TrimSuffix(p, ".json"), ".bin")] = true
	}
	names := make([]string, 0, len(bases))
	for b := range bases {
		names = append(names, b)
	}
	slices.Sort(names) // GoMLX's order: oldest first
	for i := len(names) - 1; i >= 0; i-- {
		if checkpointComplete(names[i]) {
			break
		}
		if err := os.MkdirAll(filepath.Join(dir, "incomplete"), 0o755); err != nil {
			return moved, err
		}
		for _, ext := range []string{".json", ".bin"} {
			src := names[i] + ext
			if _, err := os.Stat(src); err == nil {
				if err := os.Rename(src, filepath.Join(dir, "incomplete", filepath.Base(src))); err != nil {
					return moved, err
				}
			}
		}
		moved = append(moved, filepath.Base(names[i]))
	}
	return moved, nil
}

// checkpointComplete reports whether base.json parses and base.bin holds
// every byte the JSON's variables point at (a gzip .bin must also end with a
// valid trailer: gzip checks its CRC and length at EOF).
func checkpointComplete(base string) bool {
	jb, err := os.ReadFile(base + ".json")
	if err != nil {
		return false
	}
	var meta struct {
		Variables []struct{ Pos, Length int }
	}
	if err := json.Unmarshal(jb, &meta); err != nil {
		return false
	}
	need := 0
	for _, v := range meta.Variables {
		need = max(need, v.Pos+v.Length)
	}
	f, err := os.Open(base + ".bin")
	if err != nil {
		return false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	const header = "gomlx_checkpoints" // GoMLX's binary header; absent in uncompressed legacy files
	var r io.Reader = br
	if h, err := br.Peek(len(header)); err == nil && string(h) == header {
		br.Discard(len(header))
		var n uint8
		if binary.Read(br, binary.BigEndian, &n) != nil {
			return false
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil || string(name) != "gzip" {
			return false
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		r = zr
	}
	got, err := io.Copy(io.Discard, r)
	return err == nil && got >= int64(need)
}

// describePruned says what pruneIncompleteCheckpoints moved.
func describePruned(dir string, moved []string) string {
	return fmt.Sprintf("moved %d incomplete checkpoint(s) %v to %s", len(moved), moved, filepath.Join(dir, "incomplete"))
}
