package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"labelprivacy/data"
	"labelprivacy/pets"
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
// release into outbox/, and the ledger (beside the input dataset) must hold
// nothing that lets whoever has it and the release test label guesses. The
// attack of the finding: a 20-row dataset released with llp_geom k=20
// ε=0.1; every 2^20 label vector is hashed the ways a label digest could be
// formed (SHA-256 of the row count and labels as LabelSource did, of the
// labels alone; hex or raw, whole or 64-bit prefix) and looked up among
// every hex string and every 8-byte window of every file in the ledger's
// and the release's folders (the dataset's own files and the ledger's key
// excepted). No guess may match.
func TestPrivatizeLedgerDoesNotLeak(t *testing.T) {
	ds := synthDir(t, 20)
	in := filepath.Join(ds, data.TrainFile)
	outbox := filepath.Join(t.TempDir(), "outbox")
	os.Mkdir(outbox, 0o755)
	if _, err := cli(t, nil, "privatize", "--in", in, "--pet", "llp_geom", "--k", "20", "--epsilon", "0.1",
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
	for _, name := range listDir(t, ds) {
		switch name {
		case data.TrainFile, data.TestFile, data.MetaFile:
			continue // the raw data itself
		}
		if strings.HasSuffix(name, ".key") {
			continue // the attacker does not hold the key
		}
		scan(filepath.Join(ds, name))
		scanned++
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
	if _, err := os.Stat(filepath.Join(ds, pets.LedgerFile)); err != nil || scanned == 0 {
		t.Fatalf("no ledger beside the input dataset: %v", err)
	}
}

// The three under-counts of the finding: the same 2,000 people released at
// ε=1 from the original file, a row-reversed copy and a copy less one row
// (all beside the original) compose per person: the 1,999 people in all
// three carry ε = 3 (basic), whatever folders the releases go to. A fourth,
// re-imported copy in another folder composes through --ledger; releases to
// different folders of one label set compose (10 + 2 + 2 → 14 + the rest).
func TestLedgerComposesPeople(t *testing.T) {
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
	rev := filepath.Join(ds, "reversed.arrow")
	minus := filepath.Join(ds, "minus_one.arrow")
	if err := data.WriteFrame(rev, f.Take(rows), nil); err != nil {
		t.Fatal(err)
	}
	if err := data.WriteFrame(minus, f.Slice(1, f.Rows), nil); err != nil {
		t.Fatal(err)
	}
	ledger := filepath.Join(ds, pets.LedgerFile)
	for i, in := range []string{orig, rev, minus} {
		out := filepath.Join(t.TempDir(), "out"+strconv.Itoa(i), "r.arrow")
		os.MkdirAll(filepath.Dir(out), 0o755)
		if _, err := cli(t, nil, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out); err != nil {
			t.Fatal(err)
		}
	}
	rs := ledgerRows(t, ledger)
	last := rs[len(rs)-1]
	if len(rs) != 3 || num(t, last, "eps_total_basic") != 3 || num(t, last, "releases") != 3 ||
		num(t, last, "people_at_worst") != 1999 {
		t.Fatalf("after original + reversed + minus-one releases at ε=1: %v; want basic 3 over 3 releases for 1,999 people", last)
	}
	if e := num(t, last, "eps_total"); !(e > 2.99 && e <= 3) {
		t.Fatalf("eps_total %v, want the 3-fold rr(1) value just below 3", e)
	}

	// A re-imported copy (same rows shuffled, in another folder) composes
	// when the ledger is named.
	other := filepath.Join(t.TempDir(), "copy")
	os.Mkdir(other, 0o755)
	perm := make([]int, f.Rows)
	for i := range perm {
		perm[i] = (i * 7919) % f.Rows
	}
	cp := filepath.Join(other, "train.arrow")
	if err := data.WriteFrame(cp, f.Take(perm), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cli(t, nil, "privatize", "--in", cp, "--ledger", ledger, "--pet", "rr", "--epsilon", "1",
		"--out", filepath.Join(t.TempDir(), "r.arrow")); err != nil {
		t.Fatal(err)
	}
	rs = ledgerRows(t, ledger)
	if last = rs[len(rs)-1]; num(t, last, "eps_total_basic") != 4 || num(t, last, "people_at_worst") != 1999 {
		t.Fatalf("re-imported copy: %v; want basic 4 for 1,999 people", last)
	}

	// One label set released into three folders: 10 + 2 + 2 releases.
	small := filepath.Join(synthDir(t, 50), data.TrainFile)
	n := 0
	for _, k := range []int{10, 2, 2} {
		dir := t.TempDir()
		for j := range k {
			if _, err := cli(t, nil, "privatize", "--in", small, "--pet", "rr", "--epsilon", "0.5",
				"--out", filepath.Join(dir, "r"+strconv.Itoa(j)+".arrow")); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	rs = ledgerRows(t, filepath.Join(filepath.Dir(small), pets.LedgerFile))
	if last = rs[len(rs)-1]; num(t, last, "releases") != float64(n) || num(t, last, "eps_total_basic") != 7 {
		t.Fatalf("releases into three folders: %v; want %d releases, basic 7", last, n)
	}
}

// --budget: a release that would take anyone above the budget is refused
// before anything is written (no release file, ledger files unchanged),
// naming how many people and their current total.
func TestPrivatizeBudget(t *testing.T) {
	ds := synthDir(t, 300)
	in := filepath.Join(ds, data.TrainFile)
	outDir := t.TempDir()
	for i := range 2 {
		if _, err := cli(t, nil, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--budget", "2.5",
			"--out", filepath.Join(outDir, "r"+strconv.Itoa(i)+".arrow")); err != nil {
			t.Fatal(err)
		}
	}
	snapshot := func() map[string][]byte {
		m := map[string][]byte{}
		for _, name := range listDir(t, ds) {
			b, _ := os.ReadFile(filepath.Join(ds, name))
			m[name] = b
		}
		return m
	}
	before := snapshot()
	out := filepath.Join(outDir, "r2.arrow")
	_, err := cli(t, nil, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--budget", "2.5", "--out", out)
	if err == nil {
		t.Fatal("a third rr(1) release under budget 2.5 was accepted")
	}
	for _, want := range []string{"budget", "300 people", "ε = 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("refusal %q does not say %q", err, want)
		}
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Fatal("the refused release was written")
	}
	after := snapshot()
	if len(after) != len(before) {
		t.Fatalf("files beside the dataset changed: %v → %v", len(before), len(after))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Fatalf("%s changed on a refused release", name)
		}
	}
	// Within budget (bot adds nothing) it goes through.
	if _, err := cli(t, nil, "privatize", "--in", in, "--pet", "bot", "--budget", "2.5", "--out", out); err != nil {
		t.Fatal(err)
	}
}

// privatize never destroys: each refused --out leaves every file as it was
// and writes nothing; --force overwrites an existing release (never the
// input or a dataset file); the extension decides the format; ε is checked
// against the config's range.
func TestPrivatizeRefuses(t *testing.T) {
	type fixture struct{ ds, in, loose, looseIn, outDir, existing string }
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
		{"out is in another dataset directory", func(f fixture) []string {
			return []string{"--in", f.looseIn, "--ledger", filepath.Join(t.TempDir(), "l.csv"), "--out", filepath.Join(f.ds, "share.arrow")}
		}, "is in the dataset directory"},
		{"out is beside the ledger", func(f fixture) []string {
			return []string{"--in", f.looseIn, "--out", filepath.Join(f.loose, "share.arrow")}
		}, "is in the folder of the privacy ledger"},
		{"out exists", func(f fixture) []string { return []string{"--in", f.in, "--out", f.existing} }, "never replaces a file unless --force"},
		{"parquet name", func(f fixture) []string { return []string{"--in", f.in, "--out", filepath.Join(f.outDir, "r.parquet")} }, "name it .arrow"},
		{"no extension", func(f fixture) []string { return []string{"--in", f.in, "--out", filepath.Join(f.outDir, "r")} }, "name it .arrow"},
		{"epsilon below the config's range", func(f fixture) []string {
			return []string{"--in", f.in, "--out", filepath.Join(f.outDir, "e.arrow"), "--epsilon", "1e-7"}
		}, "--epsilon: "},
		{"epsilon above the config's range", func(f fixture) []string {
			return []string{"--in", f.in, "--out", filepath.Join(f.outDir, "e.arrow"), "--epsilon", "1e9"}
		}, "--epsilon: "},
		{"force never overwrites the input", func(f fixture) []string { return []string{"--in", f.in, "--out", f.in, "--force"} }, "is the input --in"},
		{"force never overwrites a hard link to the input", func(f fixture) []string {
			link := filepath.Join(f.outDir, "link.arrow")
			if err := os.Link(f.looseIn, link); err != nil {
				t.Skip("no hard links here")
			}
			return []string{"--in", f.looseIn, "--ledger", filepath.Join(t.TempDir(), "l.csv"), "--out", link, "--force"}
		}, "is the input --in"},
	}
	hashDir := func(dir string) map[string]string {
		m := map[string]string{}
		for _, name := range listDir(t, dir) {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			s := sha256.Sum256(b)
			m[name] = hex.EncodeToString(s[:])
		}
		return m
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := setup(t)
			a := tc.args(f)
			dirs := []string{f.ds, f.loose, f.outDir}
			var before []map[string]string
			for _, d := range dirs {
				before = append(before, hashDir(d))
			}
			args := append([]string{"privatize", "--pet", "rr"}, a...)
			if !slices.Contains(a, "--epsilon") {
				args = append(args, "--epsilon", "1")
			}
			_, err := cli(t, nil, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a refusal mentioning %q", err, tc.want)
			}
			for i, d := range dirs {
				if after := hashDir(d); !mapsEqual(after, before[i]) {
					t.Fatalf("%s changed: %v → %v", d, before[i], after)
				}
			}
		})
	}
	// --force replaces an existing release file.
	f := setup(t)
	if _, err := cli(t, nil, "privatize", "--in", f.in, "--pet", "rr", "--epsilon", "1", "--out", f.existing, "--force"); err != nil {
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
// many people carry it.
func TestCLILedgerCommand(t *testing.T) {
	ds := synthDir(t, 120)
	in := filepath.Join(ds, data.TrainFile)
	outDir := t.TempDir()
	for i := range 40 {
		if _, err := cli(t, nil, "privatize", "--in", in, "--pet", "rr", "--epsilon", "0.1",
			"--out", filepath.Join(outDir, "r"+strconv.Itoa(i)+".arrow")); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cli(t, nil, "ledger", ds)
	if err != nil {
		t.Fatal(err)
	}
	// 40 × rr(0.1) at δ' = 1e-6 is (2.7754…, 1e-6)-DP (Kairouz–Oh–Viswanath).
	if !strings.Contains(out, "(2.775") || !strings.Contains(out, "over 40 releases") || !strings.Contains(out, "120 people carry the most") {
		t.Fatalf("ledger statement:\n%s", out)
	}
}

// A ledger of the previous format (per label column, plain SHA-256 of the
// labels) beside the data is refused with what to do, and nothing is
// written: no release, no key, no change to the old file.
func TestPrivatizeRefusesPreviousLedger(t *testing.T) {
	ds := synthDir(t, 50)
	old := "id,status,source,rows,mechanism,k,epsilon,noise,seed,path,sha256,releases,eps_total_basic," +
		"eps_total_advanced,eps_total,eps_total_seed004,delta_prime,time,reason\n"
	ledger := filepath.Join(ds, pets.LedgerFile)
	os.WriteFile(ledger, []byte(old), 0o644)
	out := filepath.Join(t.TempDir(), "r.arrow")
	_, err := cli(t, nil, "privatize", "--in", filepath.Join(ds, data.TrainFile), "--pet", "rr", "--epsilon", "1", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "previous format") || !strings.Contains(err.Error(), "Move it aside") {
		t.Fatalf("error %v, want the previous format refused with what to do", err)
	}
	if b, _ := os.ReadFile(ledger); string(b) != old {
		t.Fatal("the old ledger changed")
	}
	for _, p := range []string{out, pets.KeyPath(ledger), pets.PeoplePath(ledger)} {
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
	outDir, start := t.TempDir(), filepath.Join(t.TempDir(), "start")
	const procs, each = 4, 5
	cmds := make([]*exec.Cmd, procs)
	outs := make([]bytes.Buffer, procs)
	for i := range cmds {
		c := exec.Command(os.Args[0], "-test.run=^TestPrivatizeChild$")
		c.Env = append(os.Environ(), "PRIVATIZE_CHILD_IN="+in, "PRIVATIZE_CHILD_OUT="+filepath.Join(outDir, strconv.Itoa(i)),
			"PRIVATIZE_CHILD_START="+start, "PRIVATIZE_CHILD_N="+strconv.Itoa(each))
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
	rs := ledgerRows(t, filepath.Join(ds, pets.LedgerFile))
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
	st, err := pets.ReadLedgerState(filepath.Join(ds, pets.LedgerFile), 1e-6)
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
		if _, err := cli(t, nil, "privatize", "--in", in, "--pet", "rr", "--epsilon", "0.5",
			"--out", filepath.Join(out, strconv.Itoa(i)+".arrow")); err != nil {
			t.Fatal(err)
		}
	}
}

// An LLP release covers only the rows in its bags: the n mod k dropped
// rows are not charged (with --keep-remainder they are).
func TestPrivatizeLedgerCountsCoveredRows(t *testing.T) {
	ds := synthDir(t, 203)
	in := filepath.Join(ds, data.TrainFile)
	out := t.TempDir()
	for i, extra := range [][]string{nil, {"--keep-remainder"}} {
		args := append([]string{"privatize", "--in", in, "--pet", "llp_geom", "--k", "10", "--epsilon", "1",
			"--out", filepath.Join(out, strconv.Itoa(i)+".arrow")}, extra...)
		if _, err := cli(t, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
	rs := ledgerRows(t, filepath.Join(ds, pets.LedgerFile))
	if num(t, rs[0], "people") != 200 || num(t, rs[0], "rows") != 200 || num(t, rs[1], "people") != 203 ||
		num(t, rs[1], "releases") != 2 || num(t, rs[1], "people_at_worst") != 200 {
		t.Fatalf("rows %v", rs)
	}
}
