package data

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got (as indented JSON) with testdata/name, or rewrites it
// with -update.
func golden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs from the golden file; diff it or rerun with -update:\n got: %s", path, b)
	}
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	return lines
}

type higgsRow struct {
	Label uint8
	Feats []float32
}

func TestParseHiggsLineGolden(t *testing.T) {
	var rows []higgsRow
	for i, line := range readLines(t, "testdata/higgs_small.csv") {
		feats := make([]float32, 28)
		y, err := ParseHiggsLine(line, feats)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		rows = append(rows, higgsRow{y, feats})
	}
	golden(t, "higgs_small.golden.json", rows)
}

func TestParseHiggsLineErrors(t *testing.T) {
	good := string(readLines(t, "testdata/higgs_small.csv")[0])
	fields := strings.Split(good, ",")
	with := func(col int, v string) string {
		f := append([]string(nil), fields...)
		f[col] = v
		return strings.Join(f, ",")
	}
	tests := []struct {
		name    string
		line    string
		want    error
		message string
	}{
		{"too few columns", strings.Join(fields[:28], ","), ErrMalformed, "28 columns"},
		{"too many columns", good + ",1.0", ErrMalformed, "more than 29"},
		{"empty field", with(5, ""), ErrMalformed, "column 6 is empty"},
		{"not a number", with(3, "abc"), ErrMalformed, "column 4"},
		{"NaN feature", with(7, "nan"), ErrInvalid, "column 8"},
		{"Inf feature", with(2, "-Inf"), ErrInvalid, "column 3 is \"-Inf\" (infinite)"},
		{"1e999 feature", with(4, "1e999"), ErrInvalid, "column 5: \"1e999\" is out of float32 range"},
		{"-1e999 feature", with(4, "-1e999"), ErrInvalid, "out of float32 range"},
		{"beyond float32", with(6, "3.5e38"), ErrInvalid, "column 7: \"3.5e38\" is out of float32 range"},
		{"label 1e999", with(0, "1e999"), ErrLabel, "column 1"},
		{"label 2", with(0, "2.0e+00"), ErrLabel, "column 1"},
		{"label 0.5", with(0, "0.5"), ErrLabel, "not 0 or 1"},
		{"empty line", "", ErrMalformed, "column 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHiggsLine([]byte(tc.line), make([]float32, 28))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("err = %q, want it to mention %q", err, tc.message)
			}
		})
	}
	t.Run("CRLF accepted", func(t *testing.T) {
		if _, err := ParseHiggsLine([]byte(good+"\r\n"), make([]float32, 28)); err != nil {
			t.Fatal(err)
		}
	})
}

type libsvmRow struct {
	Label     uint8
	Indices   []uint32
	NonBinary int
}

func TestParseLibSVMLineGolden(t *testing.T) {
	var rows []libsvmRow
	var ln LibSVMLine
	for i, line := range readLines(t, "testdata/kdd_small.libsvm") {
		if err := ParseLibSVMLine(line, DefaultHashBuckets, &ln); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		rows = append(rows, libsvmRow{ln.Label, append([]uint32{}, ln.Indices...), ln.NonBinary})
	}
	golden(t, "kdd_small.golden.json", rows)
}

func TestParseLibSVMLineErrors(t *testing.T) {
	tests := []struct {
		name, line string
		want       error
		message    string
	}{
		{"empty", "   ", ErrMalformed, "empty line"},
		{"label 2", "2 1:1", ErrLabel, `"2"`},
		{"label word", "yes 1:1", ErrLabel, "yes"},
		{"no colon", "1 17", ErrMalformed, "field 2"},
		{"index zero", "1 0:1", ErrMalformed, "integer ≥ 1"},
		{"negative index", "1 -4:1", ErrMalformed, "field 2"},
		{"bad value", "1 3:1 4:x", ErrMalformed, "field 3"},
		{"NaN value", "1 3:nan", ErrInvalid, "field 2"},
		{"1e999 value", "1 3:1 4:1e999", ErrInvalid, "field 3: value \"1e999\" is out of float64 range"},
		{"missing value", "0 3:", ErrMalformed, "field 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ln LibSVMLine
			err := ParseLibSVMLine([]byte(tc.line), 100, &ln)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.want, tc.message)
			}
		})
	}
}

// Repeated raw indices keep their first non-zero entry and are counted;
// distinct indices sharing a bucket are kept and counted as collisions. The
// long rows take the map path (≥ dedupScan entries); both paths are checked
// against a brute-force reference.
func TestParseLibSVMLineDuplicates(t *testing.T) {
	long := func(n, repeat int) string {
		var b strings.Builder
		b.WriteString("1")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, " %d:1", i)
			if i%repeat == 0 { // a repeat of an index added 3 entries ago
				fmt.Fprintf(&b, " %d:2", i-3)
			}
		}
		return b.String()
	}
	tests := []struct {
		name, line string
		buckets    uint32
		dups       int
		colls      int
		nonBinary  int
		width      int
	}{
		{"no repeats", "1 3:1 5:1 9:1", 1 << 30, 0, 0, 0, 3},
		{"index twice", "1 3:1 3:1", 1 << 30, 1, 0, 0, 1},
		{"index thrice, other values", "0 3:1 7:1 3:0.5 3:2", 1 << 30, 2, 0, 0, 2},
		{"zero entry is not a duplicate", "1 3:0 3:1", 1 << 30, 0, 0, 0, 1},
		{"one bucket: every other index collides", "1 1:1 2:1 3:1 2:1", 1, 1, 2, 0, 3},
		{"long row, repeats and collisions", long(60, 7), 16, 8, 44, 0, 60},
		{"long row, one bucket", long(40, 5), 1, 8, 39, 0, 40},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ln LibSVMLine
			if err := ParseLibSVMLine([]byte(tc.line), tc.buckets, &ln); err != nil {
				t.Fatal(err)
			}
			wantIdx, dups, colls := dedupReference(t, tc.line, tc.buckets)
			if ln.Duplicates != dups || ln.Collisions != colls || fmt.Sprint(ln.Indices) != fmt.Sprint(wantIdx) {
				t.Fatalf("got %d duplicates, %d collisions, %v; reference %d, %d, %v", ln.Duplicates, ln.Collisions, ln.Indices, dups, colls, wantIdx)
			}
			if ln.Duplicates != tc.dups || ln.Collisions != tc.colls || ln.NonBinary != tc.nonBinary || len(ln.Indices) != tc.width {
				t.Fatalf("got %d duplicates, %d collisions, %d non-binary, width %d; want %d, %d, %d, %d",
					ln.Duplicates, ln.Collisions, ln.NonBinary, len(ln.Indices), tc.dups, tc.colls, tc.nonBinary, tc.width)
			}
		})
	}
}

// dedupReference is the brute-force definition: keep the first non-zero
// entry of each raw index; a kept entry collides when an earlier kept entry
// has its bucket.
func dedupReference(t *testing.T, line string, buckets uint32) (idx []uint32, dups, colls int) {
	seen := map[uint64]bool{}
	for _, tok := range strings.Fields(line)[1:] {
		i, v, _ := strings.Cut(tok, ":")
		raw, err := strconv.ParseUint(i, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if val, _ := strconv.ParseFloat(v, 64); val == 0 {
			continue
		}
		if seen[raw] {
			dups++
			continue
		}
		seen[raw] = true
		b := HashIndex(raw, buckets)
		for _, e := range idx {
			if e == b {
				colls++
				break
			}
		}
		idx = append(idx, b)
	}
	return idx, dups, colls
}

// The hash is part of the on-disk contract: these values must never change.
func TestHashIndexStable(t *testing.T) {
	got := map[string]uint32{}
	for _, idx := range []uint64{1, 2, 3, 11, 2047, 54686452} {
		got[strconv.FormatUint(idx, 10)] = HashIndex(idx, DefaultHashBuckets)
	}
	golden(t, "hash_index.golden.json", got)
	// Spread: 1e5 consecutive indices into 100 buckets. Each count is
	// Binomial(1e5, 0.01): mean 1000, sd 31.5; ±200 is a 6.3σ bound, a
	// false-failure rate < 1e-8 per bucket (< 1e-6 for all 100).
	counts := make([]int, 100)
	for i := uint64(1); i <= 100000; i++ {
		counts[HashIndex(i, 100)]++
	}
	for b, c := range counts {
		if math.Abs(float64(c)-1000) > 200 {
			t.Fatalf("bucket %d holds %d of 100000 indices, want ≈1000", b, c)
		}
	}
}

func FuzzParseHiggsLine(f *testing.F) {
	for _, l := range readLinesF(f, "testdata/higgs_small.csv") {
		f.Add(l)
	}
	f.Add([]byte("1,2,3"))
	f.Add([]byte(",,,,"))
	f.Fuzz(func(t *testing.T, line []byte) {
		feats := make([]float32, 28)
		y, err := ParseHiggsLine(line, feats)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrLabel) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if y > 1 {
			t.Fatalf("label %d", y)
		}
		// A parsed line re-formatted must parse to the same values.
		parts := []string{strconv.Itoa(int(y))}
		for _, v := range feats {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("non-finite feature %v accepted", v)
			}
			parts = append(parts, strconv.FormatFloat(float64(v), 'g', -1, 32))
		}
		again := make([]float32, 28)
		y2, err := ParseHiggsLine([]byte(strings.Join(parts, ",")), again)
		if err != nil || y2 != y {
			t.Fatalf("re-parse: %v, label %d vs %d", err, y2, y)
		}
		for j := range feats {
			if feats[j] != again[j] {
				t.Fatalf("feature %d: %v then %v", j, feats[j], again[j])
			}
		}
	})
}

// FuzzParseLibSVMLine parses lines as binary (classes 0 or 2) or C-class
// labels (classes 3..64; other values must be refused).
func FuzzParseLibSVMLine(f *testing.F) {
	for _, l := range readLinesF(f, "testdata/kdd_small.libsvm") {
		f.Add(l, uint32(500000), uint8(0))
	}
	f.Add([]byte("1 1:1 1:1"), uint32(1), uint8(0))
	f.Add([]byte("0 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1 10:1 11:1 12:1 13:1 14:1 15:1 16:1 17:1 18:1 19:1 20:1 21:1 22:1 23:1 24:1 25:1 26:1 27:1 28:1 29:1 30:1 31:1 32:1 33:1 3:1 34:2"), uint32(7), uint8(2))
	f.Add([]byte("1 5:1e999"), uint32(10), uint8(0))
	// Multiclass labels: in range, at the bounds, out of range, signed,
	// with ".0", leading zeros, a label that binary reads (-1), too many
	// or too few classes.
	for _, c := range []struct {
		line    string
		classes uint8
	}{
		{"9 3:1 17:1", 10}, {"0 1:1", 10}, {"10 1:1", 10}, {"63 2:1", 64}, {"64 2:1", 64},
		{"4.0 1:1 2:0.5", 5}, {"-1 1:1", 5}, {"+2 1:1", 5}, {"007 1:1", 10}, {"2.5 1:1", 10},
		{"1 1:1", 65}, {"1 1:1", 1}, {"255 4:1", 3}, {"1e1 1:1", 20}, {"3 # comment", 4},
	} {
		f.Add([]byte(c.line), uint32(100), c.classes)
	}
	f.Fuzz(func(t *testing.T, line []byte, buckets uint32, classes uint8) {
		if buckets == 0 {
			buckets = 1
		}
		var ln LibSVMLine
		err := ParseLibSVMLineClasses(line, buckets, int(classes), &ln)
		if (classes == 1 || classes > MaxClasses) && !errors.Is(err, ErrInvalid) {
			t.Fatalf("classes %d: err = %v", classes, err)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrLabel) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			return
		}
		if int(ln.Label) >= max(int(classes), 2) {
			t.Fatalf("label %d for %d classes", ln.Label, classes)
		}
		if classes <= 2 {
			var bin LibSVMLine
			if err := ParseLibSVMLine(line, buckets, &bin); err != nil || bin.Label != ln.Label || !slices.Equal(bin.Indices, ln.Indices) {
				t.Fatalf("classes %d differs from the binary parse: %v", classes, err)
			}
		} else {
			// The label token is the class in decimal (perhaps with ".0").
			body := line
			if i := bytes.IndexByte(line, '#'); i >= 0 {
				body = line[:i]
			}
			tok, _ := nextToken(body)
			if s := strings.TrimSuffix(string(tok), ".0"); strings.TrimLeft(s, "0") != strings.TrimLeft(strconv.Itoa(int(ln.Label)), "0") {
				t.Fatalf("label token %q parsed as class %d", tok, ln.Label)
			}
		}
		for _, b := range ln.Indices {
			if b >= buckets {
				t.Fatalf("bucket %d ≥ %d", b, buckets)
			}
		}
		// Kept raw indices are distinct; collisions are the kept entries
		// whose bucket an earlier kept entry holds.
		if len(ln.raw) != len(ln.Indices) {
			t.Fatalf("%d raw indices for %d buckets", len(ln.raw), len(ln.Indices))
		}
		colls := 0
		for i := range ln.raw {
			for j := range i {
				if ln.raw[i] == ln.raw[j] {
					t.Fatalf("raw index %d kept twice", ln.raw[i])
				}
			}
			if slices.Contains(ln.Indices[:i], ln.Indices[i]) {
				colls++
			}
		}
		if colls != ln.Collisions || ln.Duplicates < 0 {
			t.Fatalf("%d collisions counted, %d present", ln.Collisions, colls)
		}
	})
}

func readLinesF(f *testing.F, path string) [][]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(b), []byte("\n"))
}
