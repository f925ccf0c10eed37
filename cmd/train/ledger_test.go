package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"labelprivacy/data"
	"labelprivacy/internal/faultpoint"
	"labelprivacy/ledger"
)

// ledgerRows reads a privacy ledger as CSV records keyed by column name (so
// the test reads any format, and a missing file fails it).
func ledgerRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) < 1 {
		t.Fatalf("ledger %s: %v", path, err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for j, name := range recs[0] {
			m[name] = r[j]
		}
		rows = append(rows, m)
	}
	return rows
}

func num(t *testing.T, row map[string]string, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		t.Fatalf("column %s = %q: %v (row %v)", col, row[col], err, row)
	}
	return v
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// The leak: `privatize --out outbox/share.arrow` must write nothing but the
// release into outbox/, and the ledger (the user's) must hold nothing that
// lets whoever has it and the release test label guesses. The
// attack of the finding: a 20-row dataset released with llp_geom k=20
// ε=0.1; every 2^20 label vector is hashed the ways a label digest could be
// formed (SHA-256 of the row count and labels as LabelSource did, of the
// labels alone; hex or raw, whole or 64-bit prefix) and looked up among
// every hex string and every 8-byte window of every file in the ledger's
// and the release's folders (the dataset's own files and the ledger's key
// excepted). No guess may match.
func TestPrivatizeLedgerDoesNotLeak(t *testing.T) {
	env := userEnv(t)
	ds := synthDir(t, 20)
	in := filepath.Join(ds, data.TrainFile)
	outbox := filepath.Join(t.TempDir(), "outbox")
	os.Mkdir(outbox, 0o755)
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "llp_geom", "--k", "20", "--epsilon", "0.1",
		"--out", filepath.Join(outbox, "share.arrow")); err != nil {
		t.Fatal(err)
	}

	hexRE := regexp.MustCompile(`[0-9a-fA-F]{16,}`)
	hexes := map[string]bool{}
	windows := map[uint64]bool{}
	scan := func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hexRE.FindAll(b, -1) {
			s := strings.ToLower(string(h))
			for i := 0; i+16 <= len(s); i++ { // every 64-bit hex window
				hexes[s[i:i+16]] = true
			}
		}
		for i := 0; i+8 <= len(b); i++ {
			windows[binary.LittleEndian.Uint64(b[i:])] = true
		}
	}
	for _, name := range listDir(t, outbox) {
		scan(filepath.Join(outbox, name))
	}
	scanned := 0
	ledgerDir := filepath.Dir(userLedger(env))
	for _, name := range listDir(t, ledgerDir) {
		if strings.HasSuffix(name, ".key") {
			continue // the attacker does not hold the key
		}
		scan(filepath.Join(ledgerDir, name))
		scanned++
	}
	if got := listDir(t, ds); len(got) != 3 {
		t.Fatalf("privatize wrote into the dataset directory: %v", got)
	}
	frame, err := data.ReadFrame(in)
	if err != nil {
		t.Fatal(err)
	}
	n := frame.Rows
	labels := make([]uint8, n)
	buf := make([]byte, 8+n)
	binary.LittleEndian.PutUint64(buf, uint64(n))
	found := 0
	for v := range 1 << n {
		for i := range labels {
			labels[i] = uint8(v >> i & 1)
		}
		copy(buf[8:], labels)
		for _, d := range [][32]byte{sha256.Sum256(buf), sha256.Sum256(buf[8:])} {
			if hexes[hex.EncodeToString(d[:8])] || windows[binary.LittleEndian.Uint64(d[:8])] {
				found++
			}
		}
	}
	if found > 0 {
		t.Fatalf("%d label guesses match a digest in the ledger or the release folder", found)
	}
	if got := listDir(t, outbox); !slices.Equal(got, []string{"share.arrow"}) {
		t.Fatalf("the release folder holds %v, want only share.arrow", got)
	}
	if scanned != 2 {
		t.Fatalf("the user's ledger folder holds %v", listDir(t, ledgerDir))
	}
}

// The default ledger is found by the people, not by the input's path: one
// per user (XDG_DATA_HOME, else ~/.local/share), so the same 2,000 people
// released from the original file, a row-reversed copy, a copy less one
// row, a symbolic link, a hard link and a re-import into another folder
// compose per person: the 1,999 people in all six carry basic ε = 6
// (before, each link and re-import got a fresh ledger beside it). Releases
// of one label set into three folders compose too (10 + 2 + 2 → basic 7).
func TestLedgerComposesPeople(t *testing.T) {
	env := userEnv(t)
	ds := synthDir(t, 2000)
	orig := filepath.Join(ds, data.TrainFile)
	f, err := data.ReadFrame(orig)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]int, f.Rows)
	for i := range rows {
		rows[i] = f.Rows - 1 - i
	}
	other := t.TempDir()
	rev := filepath.Join(other, "reversed.arrow")
	minus := filepath.Join(other, "minus_one.arrow")
	if err := data.WriteFrame(rev, f.Take(rows), nil); err != nil {
		t.Fatal(err)
	}
	if err := data.WriteFrame(minus, f.Slice(1, f.Rows), nil); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(t.TempDir(), "sym.arrow")
	if err := os.Symlink(orig, sym); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(t.TempDir(), "hard.arrow")
	if err := os.Link(orig, hard); err != nil {
		t.Skip("no hard links here")
	}
	perm := make([]int, f.Rows)
	for i := range perm {
		perm[i] = (i * 7919) % f.Rows
	}
	reimport := filepath.Join(t.TempDir(), "copy", data.TrainFile)
	os.MkdirAll(filepath.Dir(reimport), 0o755)
	if err := data.WriteFrame(reimport, f.Take(perm), nil); err != nil {
		t.Fatal(err)
	}
	for i, in := range []string{orig, rev, minus, sym, hard, reimport} {
		out := filepath.Join(t.TempDir(), "out"+strconv.Itoa(i), "r.arrow")
		os.MkdirAll(filepath.Dir(out), 0o755)
		if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out); err != nil {
			t.Fatal(err)
		}
	}
	rs := ledgerRows(t, userLedger(env))
	last := rs[len(rs)-1]
	if len(rs) != 6 || num(t, last, "eps_total_basic") != 6 || num(t, last, "releases") != 6 ||
		num(t, last, "people_at_worst") != 1999 {
		t.Fatalf("after six releases of the same people from six paths at ε=1: %v; want basic 6 over 6 releases for 1,999 people", last)
	}
	if e := num(t, last, "eps_total"); !(e > 5.99 && e <= 6) {
		t.Fatalf("eps_total %v, want the 6-fold rr(1) value just below 6", e)
	}
	for _, d := range []string{ds, other, filepath.Dir(sym), filepath.Dir(reimport)} {
		if _, err := os.Stat(filepath.Join(d, ledger.File)); err == nil {
			t.Fatalf("a ledger was written into %s", d)
		}
	}
	// HOME alone is enough: ~/.local/share/labelprivacy.
	home := map[string]string{"HOME": t.TempDir()}
	if _, err := cli(t, home, "privatize", "--in", orig, "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(t.TempDir(), "h.arrow")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home["HOME"], ".local", "share", "labelprivacy", ledger.File)); err != nil {
		t.Fatalf("no ledger under HOME: %v", err)
	}

	// One label set (other people: another seed) released into three
	// folders: 10 + 2 + 2 releases.
	smallDir := filepath.Join(t.TempDir(), "small")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 50, TestRows: 10, Features: 4, Seed: 6, Out: smallDir}); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(smallDir, data.TrainFile)
	n := 0
	for _, k := range []int{10, 2, 2} {
		dir := t.TempDir()
		for j := range k {
			if _, err := cli(t, env, "privatize", "--in", small, "--pet", "rr", "--epsilon", "0.5",
				"--out", filepath.Join(dir, "r"+strconv.Itoa(j)+".arrow")); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	rs = ledgerRows(t, userLedger(env))
	if last = rs[len(rs)-1]; num(t, last, "releases") != float64(n) || num(t, last, "eps_total_basic") != 7 {
		t.Fatalf("releases into three folders: %v; want %d releases, basic 7", last, n)
	}
}

// Several rows of one person in one release are each charged. The
// finding: a libsvm file with 2,000 of its 5,000 lines written twice,
// imported, released by rr at ε = 1 under --budget 1.5, was accepted as ε
// = 1 (a majority vote on the pairs recovers more labels than one row: the
// cost is 2). Now refused, and recorded at basic 2 without the budget; the
// same with --id-column where an id has two rows.
func TestPrivatizeChargesRepeatedRows(t *testing.T) {
	env := userEnv(t)
	var lines strings.Builder
	for i := range 100 { // the test set: other people
		fmt.Fprintf(&lines, "%d %d:1\n", i%2, 900000+i)
	}
	for i := range 5000 {
		fmt.Fprintf(&lines, "%d %d:1 %d:1\n", i%2, i+1, 100000+i)
	}
	for i := range 2000 {
		fmt.Fprintf(&lines, "%d %d:1 %d:1\n", i%2, i+1, 100000+i)
	}
	raw := filepath.Join(t.TempDir(), "twice.libsvm")
	os.WriteFile(raw, []byte(lines.String()), 0o644)
	ds := filepath.Join(t.TempDir(), "d")
	if _, err := cli(t, env, "data", "import", "libsvm", "--in", raw, "--out", ds, "--test-rows", "100"); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(ds, data.TrainFile)
	out := filepath.Join(t.TempDir(), "x.arrow")
	_, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--budget", "1.5", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "2,000 people would go above it, to ε = 2") {
		t.Fatalf("rr ε=1 of 2,000 people in two rows under budget 1.5: %v, want a refusal for 2,000 people at ε = 2", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the refused release was written")
	}
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out); err != nil {
		t.Fatal(err)
	}
	r := ledgerRows(t, userLedger(env))[0]
	if num(t, r, "rows") != 7000 || num(t, r, "people") != 5000 || num(t, r, "eps_total_basic") != 2 || num(t, r, "people_at_worst") != 2000 {
		t.Fatalf("ledger row %v, want 7,000 rows of 5,000 people, 2,000 at basic 2", r)
	}

	// An id column with two rows per id: 100 people in 200 rows.
	env = userEnv(t)
	f, err := data.ReadFrame(filepath.Join(synthDir(t, 200), data.TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	uid := make([]int64, f.Rows)
	for i := range uid {
		uid[i] = int64(i / 2)
	}
	pq := writeWithIDs(t, f, uid)
	_, err = cli(t, env, "privatize", "--in", pq, "--id-column", "uid", "--pet", "rr", "--epsilon", "1", "--budget", "1.5",
		"--out", filepath.Join(t.TempDir(), "y.arrow"))
	if err == nil || !strings.Contains(err.Error(), "100 people would go above it, to ε = 2") {
		t.Fatalf("ids with two rows under budget 1.5: %v", err)
	}
}

// writeWithIDs writes f with an integer id column "uid" as Parquet (as
// pandas would) and returns its path.
func writeWithIDs(t *testing.T, f *data.Frame, uid []int64) string {
	t.Helper()
	labels := make([]int64, f.Rows)
	for i, v := range f.Label {
		labels[i] = int64(v)
	}
	cols := []data.Column{{Name: data.ColLabel, Values: labels}, {Name: "uid", Values: uid}}
	for j, name := range f.Features {
		v := make([]float64, f.Rows)
		for i := range v {
			v[i] = float64(f.X[i*f.Dim()+j])
		}
		cols = append(cols, data.Column{Name: name, Values: v})
	}
	path := filepath.Join(t.TempDir(), "with_ids.parquet")
	if err := (&data.Table{Columns: cols}).WriteParquet(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// One ledger, one rule for who a person is: the finding counted the same
// 5,000 people as 15,000 when --id-column and feature-keyed releases mixed
// in one ledger. The second rule is refused, naming --ledger, and nothing
// is written.
func TestPrivatizeRefusesMixedIdentity(t *testing.T) {
	env := userEnv(t)
	f, err := data.ReadFrame(filepath.Join(synthDir(t, 100), data.TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	uid := make([]int64, f.Rows)
	for i := range uid {
		uid[i] = int64(i)
	}
	pq := writeWithIDs(t, f, uid)
	if _, err := cli(t, env, "privatize", "--in", pq, "--id-column", "uid", "--pet", "rr", "--epsilon", "1",
		"--out", filepath.Join(t.TempDir(), "a.arrow")); err != nil {
		t.Fatal(err)
	}
	before := readFiles(t, filepath.Dir(userLedger(env)))
	out := filepath.Join(t.TempDir(), "b.arrow")
	_, err = cli(t, env, "privatize", "--in", pq, "--pet", "rr", "--epsilon", "1", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "knows people by an id column, this release by their feature values") ||
		!strings.Contains(err.Error(), "--ledger") {
		t.Fatalf("a feature-keyed release into an id ledger: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the refused release was written")
	}
	if after := readFiles(t, filepath.Dir(userLedger(env))); !mapsEqual(after, before) {
		t.Fatal("the ledger changed")
	}
}

// readFiles hashes every file of dir.
func readFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, name := range listDir(t, dir) {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		s := sha256.Sum256(b)
		m[name] = hex.EncodeToString(s[:])
	}
	return m
}

// --budget: a release that would take anyone above the budget is refused
// before anything is written (no release file, ledger files unchanged),
// naming how many people and their current total; the count at the worst
// is the people who would reach it (the finding said all 300 would reach
// the largest total when 150 would).
func TestPrivatizeBudget(t *testing.T) {
	env := userEnv(t)
	ds := synthDir(t, 300)
	in := filepath.Join(ds, data.TrainFile)
	f, err := data.ReadFrame(in)
	if err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(t.TempDir(), "half.arrow")
	if err := data.WriteFrame(half, f.Slice(0, 150), nil); err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	for i, src := range []string{in, half} {
		if _, err := cli(t, env, "privatize", "--in", src, "--pet", "rr", "--epsilon", "1", "--budget", "2.5",
			"--out", filepath.Join(outDir, "r"+strconv.Itoa(i)+".arrow")); err != nil {
			t.Fatal(err)
		}
	}
	ledgerDir := filepath.Dir(userLedger(env))
	before := readFiles(t, ledgerDir)
	out := filepath.Join(outDir, "r2.arrow")
	_, err = cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--budget", "1.5", "--out", out)
	if err == nil {
		t.Fatal("a third rr(1) release under budget 1.5 was accepted")
	}
	for _, want := range []string{"budget ε ≤ 1.5", "300 people would go above it", "the 150 people most charged would reach ε = 3", "they carry ε = 2 now, over 2 releases"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("refusal %q does not say %q", err, want)
		}
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Fatal("the refused release was written")
	}
	if after := readFiles(t, ledgerDir); !mapsEqual(after, before) {
		t.Fatal("the ledger's files changed on a refused release")
	}
	// Within budget (bot adds nothing) it goes through.
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "bot", "--budget", "2.5", "--out", out); err != nil {
		t.Fatal(err)
	}
}

// δ' is bounded: --delta-prime 0.5 (which once let --budget 1.5 admit a
// third ε = 1 release, and made train ledger print "(0, 0.999)-label-DP")
// is refused by privatize and by train ledger; a ledger states its totals
// at its own δ', and a release at another is refused.
func TestDeltaPrimeBounded(t *testing.T) {
	env := userEnv(t)
	in := filepath.Join(synthDir(t, 100), data.TrainFile)
	outDir := t.TempDir()
	_, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--delta-prime", "0.5", "--out", filepath.Join(outDir, "x.arrow"))
	if err == nil || !strings.Contains(err.Error(), "delta_prime") || !strings.Contains(err.Error(), "0.001") {
		t.Fatalf("--delta-prime 0.5: %v", err)
	}
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--delta-prime", "1e-5", "--out", filepath.Join(outDir, "a.arrow")); err != nil {
		t.Fatal(err)
	}
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(outDir, "b.arrow")); err != nil {
		t.Fatalf("δ' unset on a 1e-5 ledger: %v", err)
	}
	_, err = cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--delta-prime", "1e-6", "--out", filepath.Join(outDir, "c.arrow"))
	if err == nil || !strings.Contains(err.Error(), "δ' = 1e-05") {
		t.Fatalf("another δ': %v", err)
	}
	out, err := cli(t, env, "ledger")
	if err != nil || !strings.Contains(out, "totals at δ' = 1e-5 (the ledger's own)") || !strings.Contains(out, "1e-5)-label-DP over 2 releases") {
		t.Fatalf("train ledger: %v\n%s", err, out)
	}
	if _, err := cli(t, env, "ledger", "--delta-prime", "0.5"); err == nil || !strings.Contains(err.Error(), "delta_prime") {
		t.Fatalf("train ledger --delta-prime 0.5: %v", err)
	}
	// δ' = 1e-3 over a release of 2,000 people (above 1/2,000) is
	// accepted with a warning.
	big := filepath.Join(synthDir(t, 2000), data.TrainFile)
	var stderr bytes.Buffer
	root := newRootCmd(&bytes.Buffer{}, &stderr, mapEnv(userEnv(t)))
	root.SetArgs([]string{"privatize", "--in", big, "--pet", "rr", "--epsilon", "1", "--delta-prime", "1e-3", "--out", filepath.Join(outDir, "big.arrow")})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "warning: the ledger's δ' = 0.001 is above 1/2000") {
		t.Fatalf("no warning for δ' above 1/people: %q", stderr.String())
	}
}

// privatize never destroys and never ships a ledger: each refused --out
// leaves every file as it was and writes nothing (the ledger's folder
// neither); --force overwrites an existing release (never the input or a
// dataset file); the extension decides the format; ε is checked against
// the config's range. A ledger anywhere under --out's folder is refused,
// also through a link (the finding: all 20 labels of a llp_geom ε = 0.1
// release recovered in 1.35 s from the key and the CSV shipped beside it),
// and so is an --out anywhere under a dataset directory or the ledger's
// folder.
func TestPrivatizeRefuses(t *testing.T) {
	type fixture struct{ ds, in, loose, looseIn, outDir, existing, outbox, valuesIn string }
	setup := func(t *testing.T) fixture {
		var f fixture
		f.ds = synthDir(t, 100)
		f.in = filepath.Join(f.ds, data.TrainFile)
		f.loose = t.TempDir() // a non-dataset folder holding an input
		f.looseIn = filepath.Join(f.loose, "labelled.arrow")
		b, _ := os.ReadFile(f.in)
		os.WriteFile(f.looseIn, b, 0o644)
		f.outDir = t.TempDir()
		f.existing = filepath.Join(f.outDir, "existing.arrow")
		os.WriteFile(f.existing, []byte("keep me"), 0o644)
		f.outbox = filepath.Join(t.TempDir(), "outbox")
		os.MkdirAll(filepath.Join(f.outbox, "led"), 0o755)
		os.MkdirAll(filepath.Join(f.ds, "sub"), 0o755)
		vds := filepath.Join(t.TempDir(), "values")
		if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthValues, Rows: 100, TestRows: 10, Features: 3, Seed: 5, Out: vds}); err != nil {
			t.Fatal(err)
		}
		f.valuesIn = filepath.Join(vds, data.TrainFile)
		return f
	}
	tests := []struct {
		name string
		args func(f fixture) []string
		want string // in the error
	}{
		{"out is the input", func(f fixture) []string { return []string{"--in", f.in, "--out", f.in} }, "is the input --in"},
		{"out is the input by another path", func(f fixture) []string {
			return []string{"--in", f.in, "--out", filepath.Join(f.ds, "..", filepath.Base(f.ds), data.TrainFile)}
		}, "is the input --in"},
		{"out is a dataset file", func(f fixture) []string { return []string{"--in", f.in, "--out", filepath.Join(f.ds, data.TestFile)} }, "is in the dataset directory"},
		{"out is a new file in a dataset directory", func(f fixture) []string {
			return []string{"--in", f.in, "--out", filepath.Join(f.ds, "share.arrow")}
		}, "is in the dataset directory"},
		{"out is below a dataset directory", func(f fixture) []string {
			return []string{"--in", f.looseIn, "--out", filepath.Join(f.ds, "sub", "share.arrow")}
		}, "is in the dataset directory"},
		{"out is in another dataset directory", func(f fixture) []string {
			return []string{"--in", f.looseIn, "--out", filepath.Join(f.ds, "share.arrow")}
		}, "is in the dataset directory"},
		{"out is beside the ledger", func(f fixture) []string {
			return []string{"--in", f.looseIn, "--ledger", filepath.Join(f.loose, ledger.File), "--out", filepath.Join(f.loose, "share.arrow")}
		}, "is in the folder of the privacy ledger"},
		{"out is below the ledger's folder", func(f fixture) []string {
			os.Mkdir(filepath.Join(f.loose, "out"), 0o755)
			return []string{"--in", f.looseIn, "--ledger", filepath.Join(f.loose, ledger.File), "--out", filepath.Join(f.loose, "out", "share.arrow")}
		}, "is in the folder of the privacy ledger"},
		{"ledger below the outbox", func(f fixture) []string {
			return []string{"--in", f.in, "--ledger", filepath.Join(f.outbox, "led", ledger.File), "--out", filepath.Join(f.outbox, "share.arrow")}
		}, "lies under the folder of --out"},
		{"ledger below the outbox through a link", func(f fixture) []string {
			link := filepath.Join(f.loose, "elsewhere")
			if err := os.Symlink(f.outbox, link); err != nil {
				t.Skip("no symbolic links here")
			}
			return []string{"--in", f.in, "--ledger", filepath.Join(link, "led", ledger.File), "--out", filepath.Join(f.outbox, "share.arrow")}
		}, "lies under the folder of --out"},
		{"out in a folder holding another ledger", func(f fixture) []string {
			os.WriteFile(filepath.Join(f.outbox, ledger.File), []byte("x"), 0o600)
			return []string{"--in", f.in, "--out", filepath.Join(f.outbox, "share.arrow")}
		}, "holds a privacy ledger's file"},
		{"out exists", func(f fixture) []string { return []string{"--in", f.in, "--out", f.existing} }, "never replaces a file unless --force"},
		{"parquet name", func(f fixture) []string { return []string{"--in", f.in, "--out", filepath.Join(f.outDir, "r.parquet")} }, "name it .arrow"},
		{"no extension", func(f fixture) []string { return []string{"--in", f.in, "--out", filepath.Join(f.outDir, "r")} }, "name it .arrow"},
		{"epsilon below the config's range", func(f fixture) []string {
			return []string{"--in", f.in, "--out", filepath.Join(f.outDir, "e.arrow"), "--epsilon", "1e-7"}
		}, "--epsilon: "},
		{"epsilon above the config's range", func(f fixture) []string {
			return []string{"--in", f.in, "--out", filepath.Join(f.outDir, "e.arrow"), "--epsilon", "1e9"}
		}, "--epsilon: "},
		{"an input of conversion values", func(f fixture) []string {
			return []string{"--in", f.valuesIn, "--out", filepath.Join(f.outDir, "v.arrow")}
		}, "holds conversion values"},
		{"a mechanism of conversion values", func(f fixture) []string {
			return []string{"--in", f.valuesIn, "--out", filepath.Join(f.outDir, "v.arrow"), "--pet", "laplace"}
		}, "--pet: laplace releases conversion values; privatize serves labels that are classes"},
		{"force never overwrites the input", func(f fixture) []string { return []string{"--in", f.in, "--out", f.in, "--force"} }, "is the input --in"},
		{"force never overwrites a hard link to the input", func(f fixture) []string {
			link := filepath.Join(f.outDir, "link.arrow")
			if err := os.Link(f.looseIn, link); err != nil {
				t.Skip("no hard links here")
			}
			return []string{"--in", f.looseIn, "--out", link, "--force"}
		}, "is the input --in"},
	}
	hashTree := func(dir string) map[string]string {
		m := map[string]string{}
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				s := sha256.Sum256(b)
				m[p] = hex.EncodeToString(s[:])
			}
			return nil
		})
		return m
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := userEnv(t)
			f := setup(t)
			a := tc.args(f)
			dirs := []string{f.ds, f.loose, f.outDir, f.outbox, env["HOME"]}
			var before []map[string]string
			for _, d := range dirs {
				before = append(before, hashTree(d))
			}
			args := append([]string{"privatize"}, a...)
			if !slices.Contains(a, "--pet") {
				args = append(args, "--pet", "rr")
			}
			if !slices.Contains(a, "--epsilon") {
				args = append(args, "--epsilon", "1")
			}
			_, err := cli(t, env, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a refusal mentioning %q", err, tc.want)
			}
			for i, d := range dirs {
				if after := hashTree(d); !mapsEqual(after, before[i]) {
					t.Fatalf("%s changed: %v → %v", d, before[i], after)
				}
			}
		})
	}
	// --force replaces an existing release file.
	f := setup(t)
	if _, err := cli(t, userEnv(t), "privatize", "--in", f.in, "--pet", "rr", "--epsilon", "1", "--out", f.existing, "--force"); err != nil {
		t.Fatal(err)
	}
	if g, err := data.ReadFrame(f.existing); err != nil || g.LabelRR == nil {
		t.Fatalf("--force: %v", err)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// `train ledger` states each ledger's guarantee in words: 40 rr(0.1)
// releases of 120 people read back as the worst person's (ε, δ') and how
// many people carry it; with no argument it reads the user's default.
// A file that is not a ledger (an Arrow release) is refused in words, no
// binary byte printed.
func TestCLILedgerCommand(t *testing.T) {
	env := userEnv(t)
	ds := synthDir(t, 120)
	in := filepath.Join(ds, data.TrainFile)
	outDir := t.TempDir()
	for i := range 40 {
		if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "0.1",
			"--out", filepath.Join(outDir, "r"+strconv.Itoa(i)+".arrow")); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"ledger"}, {"ledger", filepath.Dir(userLedger(env))}, {"ledger", userLedger(env)}} {
		out, err := cli(t, env, args...)
		if err != nil {
			t.Fatal(err)
		}
		// 40 × rr(0.1) at δ' = 1e-6 is (2.7754…, 1e-6)-DP (Kairouz–Oh–Viswanath).
		if !strings.Contains(out, "(2.775") || !strings.Contains(out, "over 40 releases") || !strings.Contains(out, "120 people carry the most") {
			t.Fatalf("%v: ledger statement:\n%s", args, out)
		}
	}
	var stdout, stderr bytes.Buffer
	root := newRootCmd(&stdout, &stderr, mapEnv(env))
	root.SetArgs([]string{"ledger", filepath.Join(outDir, "r0.arrow")})
	err := root.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "it is an Arrow IPC file, not a privacy ledger") {
		t.Fatalf("train ledger FILE.arrow: %v", err)
	}
	for _, s := range []string{err.Error(), stdout.String(), stderr.String()} {
		if strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || r < 0x20 && r != '\n' }) {
			t.Fatalf("binary printed: %q", s)
		}
	}
}

// A ledger whose CSV was lost (missing, or only its header) while its
// people file and key remain is refused by privatize and train ledger,
// naming the files, and nothing changes (the finding: a 41-release history
// silently became 1). Edited rows break the MAC chain: refused, naming the
// first bad row. A key others can read is refused.
func TestPrivatizeRefusesBrokenLedger(t *testing.T) {
	env := userEnv(t)
	in := filepath.Join(synthDir(t, 50), data.TrainFile)
	outDir := t.TempDir()
	for i := range 5 {
		if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(outDir, strconv.Itoa(i)+".arrow")); err != nil {
			t.Fatal(err)
		}
	}
	lp := userLedger(env)
	csvBytes, _ := os.ReadFile(lp)
	keyBytes, _ := os.ReadFile(ledger.KeyPath(lp))
	restore := func() {
		os.WriteFile(lp, csvBytes, 0o640)
		os.WriteFile(ledger.KeyPath(lp), keyBytes, 0o600)
		os.Chmod(ledger.KeyPath(lp), 0o600)
	}
	lines := strings.SplitAfter(string(csvBytes), "\n")
	for _, tc := range []struct {
		name   string
		damage func()
		want   []string
	}{
		{"CSV missing", func() { os.Remove(lp) }, []string{"CSV is missing", ledger.KeyPath(lp), ledger.PeoplePath(lp)}},
		{"CSV header only", func() { os.WriteFile(lp, []byte(lines[0]), 0o640) }, []string{"has no rows", "names row 5", "restore"}},
		{"ε edited from 1 to 0.001", func() {
			os.WriteFile(lp, []byte(strings.Join(lines[:3], "")+strings.Replace(lines[3], ",rr,0,1,", ",rr,0,0.001,", 1)+strings.Join(lines[4:], "")), 0o640)
		}, []string{"line 4", "row 3 fails its MAC"}},
		{"a row deleted", func() { os.WriteFile(lp, []byte(lines[0]+strings.Join(lines[2:], "")), 0o640) }, []string{"line 2", "row 1 fails its MAC"}},
		{"key readable by others", func() { os.Chmod(ledger.KeyPath(lp), 0o644) }, []string{"chmod 600"}},
		{"key damaged", func() { os.WriteFile(ledger.KeyPath(lp), []byte("not a key\n"), 0o600) }, []string{"is not a ledger key file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer restore()
			tc.damage()
			before := readFiles(t, filepath.Dir(lp))
			out := filepath.Join(outDir, "refused.arrow")
			_, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out)
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("privatize: %v, want %q", err, w)
				}
			}
			if strings.Count(err.Error(), "ledger: ") > 1 || strings.Count(err.Error(), "ledger: key") > 1 {
				t.Fatalf("a doubled prefix: %q", err)
			}
			if _, err := cli(t, env, "ledger"); err == nil || !strings.Contains(err.Error(), tc.want[0]) {
				t.Fatalf("train ledger: %v", err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("a release was written")
			}
			if after := readFiles(t, filepath.Dir(lp)); !mapsEqual(after, before) {
				t.Fatal("the ledger's files changed")
			}
		})
	}
	if out, err := cli(t, env, "ledger"); err != nil || !strings.Contains(out, "over 5 releases") {
		t.Fatalf("restored ledger: %v\n%s", err, out)
	}
}

// A ledger beside --in (where earlier versions kept it) is refused with
// the default ledger (its releases would not count there), saying to name
// it; named with --ledger, a ledger of an earlier format is refused with
// what to do. Nothing is written.
func TestPrivatizeRefusesPreviousLedger(t *testing.T) {
	env := userEnv(t)
	ds := synthDir(t, 50)
	old := "id,status,input,labels,identity,rows,people,mechanism,k,epsilon,noise,seed,path,sha256,releases," +
		"people_at_worst,eps_total,eps_total_basic,eps_total_drv,eps_total_drv_quad,eps_total_pld,delta_prime,time,reason,mac\n"
	lp := filepath.Join(ds, ledger.File)
	os.WriteFile(lp, []byte(old), 0o600)
	out := filepath.Join(t.TempDir(), "r.arrow")
	in := filepath.Join(ds, data.TrainFile)
	_, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "sits beside --in") || !strings.Contains(err.Error(), "--ledger") {
		t.Fatalf("error %v, want the ledger beside --in named", err)
	}
	_, err = cli(t, env, "privatize", "--in", in, "--ledger", lp, "--pet", "rr", "--epsilon", "1", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "previous format") || !strings.Contains(err.Error(), "Move it aside") {
		t.Fatalf("error %v, want the previous format refused with what to do", err)
	}
	if b, _ := os.ReadFile(lp); string(b) != old {
		t.Fatal("the old ledger changed")
	}
	for _, p := range []string{out, ledger.KeyPath(lp), ledger.PeoplePath(lp), userLedger(env)} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s was written", p)
		}
	}
}

// Concurrent privatize: 4 processes (this test binary re-executed as
// TestPrivatizeChild) each release the same dataset 5 times into one
// ledger; every release is counted exactly once (the worst person's
// release counts are 1..20) and every person carries basic ε = 20 × 0.5.
func TestPrivatizeConcurrentProcesses(t *testing.T) {
	ds := synthDir(t, 300)
	in := filepath.Join(ds, data.TrainFile)
	lp := filepath.Join(t.TempDir(), "shared", ledger.File)
	outDir, start := t.TempDir(), filepath.Join(t.TempDir(), "start")
	const procs, each = 4, 5
	cmds := make([]*exec.Cmd, procs)
	outs := make([]bytes.Buffer, procs)
	for i := range cmds {
		c := exec.Command(os.Args[0], "-test.run=^TestPrivatizeChild$")
		c.Env = append(os.Environ(), "PRIVATIZE_CHILD_IN="+in, "PRIVATIZE_CHILD_OUT="+filepath.Join(outDir, strconv.Itoa(i)),
			"PRIVATIZE_CHILD_START="+start, "PRIVATIZE_CHILD_N="+strconv.Itoa(each), "PRIVATIZE_CHILD_LEDGER="+lp)
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = c
	}
	os.WriteFile(start, nil, 0o644)
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i].String())
		}
	}
	rs := ledgerRows(t, lp)
	var counts []int
	for _, r := range rs {
		counts = append(counts, int(num(t, r, "releases")))
	}
	slices.Sort(counts)
	for i, c := range counts {
		if c != i+1 || len(counts) != procs*each {
			t.Fatalf("release counts %v, want 1..%d once each", counts, procs*each)
		}
	}
	l, _ := ledger.Open(lp, ledger.Options{})
	st, err := l.State(0)
	if err != nil || len(st.Classes) != 1 || st.Classes[0].Comp.Basic != 0.5*procs*each || st.People != 300 {
		t.Fatalf("ledger state %+v (%v)", st, err)
	}
}

// TestPrivatizeChild is the child of TestPrivatizeConcurrentProcesses.
func TestPrivatizeChild(t *testing.T) {
	in := os.Getenv("PRIVATIZE_CHILD_IN")
	if in == "" {
		t.Skip("child process of TestPrivatizeConcurrentProcesses")
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(os.Getenv("PRIVATIZE_CHILD_START")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no start signal")
		}
	}
	out := os.Getenv("PRIVATIZE_CHILD_OUT")
	os.MkdirAll(out, 0o755)
	n, _ := strconv.Atoi(os.Getenv("PRIVATIZE_CHILD_N"))
	for i := range n {
		if _, err := cli(t, nil, "privatize", "--in", in, "--ledger", os.Getenv("PRIVATIZE_CHILD_LEDGER"), "--pet", "rr", "--epsilon", "0.5",
			"--out", filepath.Join(out, strconv.Itoa(i)+".arrow")); err != nil {
			t.Fatal(err)
		}
	}
}

// An LLP release covers only the rows in its bags: the n mod k dropped
// rows are not charged (with --keep-remainder they are).
func TestPrivatizeLedgerCountsCoveredRows(t *testing.T) {
	env := userEnv(t)
	ds := synthDir(t, 203)
	in := filepath.Join(ds, data.TrainFile)
	out := t.TempDir()
	for i, extra := range [][]string{nil, {"--keep-remainder"}} {
		args := append([]string{"privatize", "--in", in, "--pet", "llp_geom", "--k", "10", "--epsilon", "1",
			"--out", filepath.Join(out, strconv.Itoa(i)+".arrow")}, extra...)
		if _, err := cli(t, env, args...); err != nil {
			t.Fatal(err)
		}
	}
	rs := ledgerRows(t, userLedger(env))
	if num(t, rs[0], "people") != 200 || num(t, rs[0], "rows") != 200 || num(t, rs[1], "people") != 203 ||
		num(t, rs[1], "releases") != 2 || num(t, rs[1], "people_at_worst") != 200 {
		t.Fatalf("rows %v", rs)
	}
}

// A privatize killed (SIGKILL, scripted at each step) never leaves a
// complete release without its ledger row, in the outbox or anywhere:
// the finding was a complete, readable, unrecorded release left as a
// hidden temporary in the outbox (tar and rsync -a ship it). Killed
// before its row: no file at all. After: a temporary at most, recorded
// (the release counts), and the next privatize, into another file,
// removes it; every ledger stays valid.
func TestPrivatizeSIGKILL(t *testing.T) {
	for _, tc := range []struct {
		point    string
		recorded bool // the killed release has its ledger row
		temp     bool // it leaves a temporary in the outbox
	}{
		{"ledger.people-written", true, false}, // rolled forward by the next writer
		{"ledger.row-written", true, false},
		{"release.recorded", true, false},
		{"release.written", true, true},
	} {
		t.Run(tc.point, func(t *testing.T) {
			env := userEnv(t)
			in := filepath.Join(synthDir(t, 200), data.TrainFile)
			outbox := t.TempDir()
			if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(outbox, "first.arrow")); err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal([]string{"privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(outbox, "killed.arrow")})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "LABELPRIVACY_CLI_ARGS="+string(args), "HOME="+env["HOME"], "XDG_DATA_HOME="+env["XDG_DATA_HOME"],
				faultpoint.Env+"="+tc.point)
			b, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child: %v (want killed by SIGKILL)\n%s", err, b)
			}
			names := listDir(t, outbox)
			var temps []string
			for _, n := range names {
				if n != "first.arrow" {
					temps = append(temps, n)
				}
			}
			if (len(temps) > 0) != tc.temp || slices.Contains(names, "killed.arrow") {
				t.Fatalf("outbox after a kill at %s: %v", tc.point, names)
			}
			rows, err := ledger.Read(userLedger(env)) // verifies, rolling forward in memory
			if err != nil {
				t.Fatal(err)
			}
			recorded := map[string]bool{}
			for _, r := range rows {
				recorded[r.SHA256] = true
			}
			if (len(rows) == 2) != tc.recorded {
				t.Fatalf("%d ledger rows after a kill at %s", len(rows), tc.point)
			}
			for _, n := range names { // every complete release in the outbox has its row
				if sum, err := data.FileSHA256(filepath.Join(outbox, n)); err == nil {
					if _, rerr := data.ReadFrame(filepath.Join(outbox, n)); rerr == nil && !recorded[sum] {
						t.Fatalf("%s is a complete release without a ledger row", n)
					}
				}
			}
			if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(outbox, "next.arrow")); err != nil {
				t.Fatal(err)
			}
			if got := listDir(t, outbox); !slices.Equal(got, []string{"first.arrow", "next.arrow"}) {
				t.Fatalf("after the next privatize the outbox holds %v", got)
			}
			last := ledgerRows(t, userLedger(env))
			if r := last[len(last)-1]; num(t, r, "releases") != 3 || num(t, r, "eps_total_basic") != 3 {
				t.Fatalf("the next release: %v, want the killed one counted (3 releases)", r)
			}
		})
	}
}
