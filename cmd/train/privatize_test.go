package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/ledger"
)

func synthDir(t *testing.T, rows int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: rows, TestRows: 10, Features: 4, Seed: 5, Out: dir}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// userEnv is a user's environment of its own: HOME and XDG_DATA_HOME in
// t.TempDir(), so the default ledger is the test's.
func userEnv(t *testing.T) map[string]string {
	home := t.TempDir()
	return map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "xdg")}
}

// userLedger is the default ledger of env.
func userLedger(env map[string]string) string {
	return filepath.Join(env["XDG_DATA_HOME"], "labelprivacy", ledger.File)
}

// `train privatize` draws from crypto/rand by default (two calls, different
// bytes, no seed in the file), warns on --seed, and its ledger (the
// user's) composes every release of the same people: two rr(1), then five
// ε-DP releases (rr 1, llp_geom 8/1, llp_lap 8/1, rr 0.5, rr 1) total 6.5,
// and a non-DP llp release makes the total infinite.
func TestCLIPrivatizeLedger(t *testing.T) {
	env := userEnv(t)
	in := filepath.Join(synthDir(t, 200), data.TrainFile)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.arrow"), filepath.Join(dir, "b.arrow")
	for _, out := range []string{a, b} {
		if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out); err != nil {
			t.Fatal(err)
		}
	}
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if bytes.Equal(ba, bb) {
		t.Fatal("two default releases have the same bytes: the noise is not from crypto/rand")
	}
	md, err := data.ReadMetadata(a)
	if err != nil || md["noise"] != "secure" {
		t.Fatalf("metadata %v (%v)", md, err)
	}
	for k := range md {
		if strings.Contains(k, "seed") {
			t.Fatalf("release metadata has key %q", k)
		}
	}

	outDir := filepath.Join(t.TempDir(), "l")
	var stderr bytes.Buffer
	for i, args := range [][]string{
		{"--pet", "rr", "--epsilon", "1"},
		{"--pet", "llp_geom", "--k", "8", "--epsilon", "1"},
		{"--pet", "llp_lap", "--k", "8", "--epsilon", "1"},
		{"--pet", "rr", "--epsilon", "0.5", "--seed", "7"},
		{"--pet", "rr", "--epsilon", "1"},
	} {
		stderr.Reset()
		root := newRootCmd(&bytes.Buffer{}, &stderr, mapEnv(env))
		root.SetArgs(append([]string{"privatize", "--in", in, "--out", filepath.Join(outDir, "r"+string(rune('0'+i))+".arrow")}, args...))
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		if seeded := strings.Contains(strings.Join(args, " "), "--seed"); seeded != strings.Contains(stderr.String(), "warning: --seed 7") {
			t.Fatalf("release %d (seeded %v): stderr %q", i, seeded, stderr.String())
		}
	}
	entries, err := ledger.Read(userLedger(env))
	if err != nil {
		t.Fatal(err)
	}
	last := entries[len(entries)-1]
	if len(entries) != 7 || last.Releases != 7 || math.Abs(last.EpsTotalBasic-6.5) > 1e-12 || last.Rows != 200 {
		t.Fatalf("ledger after 7 releases: %+v", last)
	}
	if entries[5].Seed != "7" || entries[2].Seed != "" {
		t.Fatalf("seeds in the ledger: %q, %q", entries[5].Seed, entries[2].Seed)
	}
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "llp", "--k", "8", "--out", filepath.Join(outDir, "llp.arrow")); err != nil {
		t.Fatal(err)
	}
	entries, _ = ledger.Read(userLedger(env))
	if e := entries[len(entries)-1]; !math.IsInf(e.EpsTotalBasic, 1) {
		t.Fatalf("after a non-DP release the basic total is %v, want +Inf", e.EpsTotalBasic)
	}

	_, err = cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "-1", "--out", filepath.Join(dir, "x.arrow"))
	if err == nil || !strings.Contains(err.Error(), "--epsilon") {
		t.Fatalf("err = %v, want it to name --epsilon", err)
	}
	_, err = cli(t, env, "privatize", "--in", in, "--pet", "llp", "--out", filepath.Join(dir, "x.arrow"))
	if err == nil || !strings.Contains(err.Error(), "--k") {
		t.Fatalf("err = %v, want it to name --k", err)
	}
}

// `train privatize --pet rr_prior` is refused with a pointer to train run:
// its release needs a prior model trained between two stages.
func TestCLIPrivatizeRefusesRRPrior(t *testing.T) {
	in := filepath.Join(synthDir(t, 50), data.TrainFile)
	out := filepath.Join(t.TempDir(), "r.arrow")
	_, err := cli(t, userEnv(t), "privatize", "--in", in, "--pet", "rr_prior", "--epsilon", "1", "--out", out)
	if err == nil || !strings.Contains(err.Error(), "train run") {
		t.Fatalf("error %v, want a refusal naming train run", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a file was written")
	}
}

// A release leaves the machine: its metadata names nothing of where the raw
// data lives (no source_file, no input path or file name); the ledger,
// which stays beside the raw data, records the input.
func TestPrivatizeMetadataNamesNoSource(t *testing.T) {
	dir := synthDir(t, 60)
	in := filepath.Join(dir, data.TrainFile)
	out := filepath.Join(t.TempDir(), "rel.arrow")
	if _, err := cli(t, userEnv(t), "privatize", "--in", in, "--pet", "llp", "--k", "4", "--out", out); err != nil {
		t.Fatal(err)
	}
	md, err := data.ReadMetadata(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(md) == 0 {
		t.Fatal("no metadata read back")
	}
	for k, v := range md {
		if strings.Contains(k, "source") || strings.Contains(v, data.TrainFile) || strings.Contains(v, dir) {
			t.Errorf("release metadata %s=%q points back at the raw data %s", k, v, in)
		}
	}
}

// llp with k = 1 is the identity (each bag's proportion is its one raw
// label, ε = ∞): privatize refuses it, as it refuses none, naming --k,
// and writes nothing; llp_geom at k = 1 (ε-DP) is accepted.
func TestPrivatizeRefusesLLPk1(t *testing.T) {
	env := userEnv(t)
	in := filepath.Join(synthDir(t, 50), data.TrainFile)
	out := filepath.Join(t.TempDir(), "r.arrow")
	_, err := cli(t, env, "privatize", "--in", in, "--pet", "llp", "--k", "1", "--out", out)
	if err == nil || !strings.HasPrefix(err.Error(), "--k: ") || !strings.Contains(err.Error(), "every label") {
		t.Fatalf("error %v, want --k refused for shipping every label", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a file was written")
	}
	if _, err := os.Stat(userLedger(env)); err == nil {
		t.Fatal("a ledger was created for a refused release")
	}
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "llp_geom", "--k", "1", "--epsilon", "1", "--out", out); err != nil {
		t.Fatal(err)
	}
}

// Features that are not finite are refused, naming the file, the row and
// the feature (every importer refuses them; a file written by another
// tool could carry them into a release).
func TestPrivatizeRefusesNaNFeatures(t *testing.T) {
	env := userEnv(t)
	in := filepath.Join(synthDir(t, 50), data.TrainFile)
	f, err := data.ReadFrame(in)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "nan.arrow")
	f.X[7*f.Dim()+2] = float32(math.NaN())
	if err := data.WriteFrame(bad, f, nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.arrow")
	_, err = cli(t, env, "privatize", "--in", bad, "--pet", "rr", "--epsilon", "1", "--out", out)
	if err == nil || !strings.Contains(err.Error(), bad+" row 7: feature \""+f.Features[2]+"\" is NaN") {
		t.Fatalf("error %v, want the NaN named by file, row and feature", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a file was written")
	}
}

// A feature column that is the label (y_copy, as a trial shipped with
// --pet rr --epsilon 1: the file held every raw label while the ledger
// charged ε = 1) is refused, naming the column, and nothing is written;
// --allow-label-like ships it, warning loudly on stderr and recording it
// in the release's metadata; a name that is no feature column is refused.
func TestPrivatizeRefusesLabelLike(t *testing.T) {
	env := userEnv(t)
	f, err := data.ReadFrame(filepath.Join(synthDir(t, 400), data.TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	labels, ycopy := make([]int64, f.Rows), make([]float64, f.Rows)
	for i, y := range f.Label {
		labels[i], ycopy[i] = int64(y), float64(y)
	}
	cols := []data.Column{{Name: data.ColLabel, Values: labels}}
	for j, name := range f.Features {
		v := make([]float64, f.Rows)
		for i := range v {
			v[i] = float64(f.X[i*f.Dim()+j])
		}
		cols = append(cols, data.Column{Name: name, Values: v})
	}
	cols = append(cols, data.Column{Name: "y_copy", Values: ycopy})
	in := filepath.Join(t.TempDir(), "leaky.parquet")
	if err := (&data.Table{Columns: cols}).WriteParquet(in); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.arrow")
	_, err = cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out)
	if err == nil || !strings.HasPrefix(err.Error(), "--in: ") || !strings.Contains(err.Error(), `"y_copy"`) ||
		!strings.Contains(err.Error(), "--allow-label-like") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a label copy among the features: %v, want one line naming --in, y_copy and --allow-label-like", err)
	}
	t.Logf("refused: %v", err)
	for _, p := range []string{out, userLedger(env)} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s was written", p)
		}
	}
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out, "--allow-label-like", "x9"); err == nil ||
		!strings.HasPrefix(err.Error(), "--allow-label-like: ") || !strings.Contains(err.Error(), `"x9"`) {
		t.Fatalf("--allow-label-like of no column: %v", err)
	}
	var stderr bytes.Buffer
	root := newRootCmd(&bytes.Buffer{}, &stderr, mapEnv(env))
	root.SetArgs([]string{"privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", out, "--allow-label-like", "y_copy"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "LABEL-LIKE COLUMN SHIPPED") || !strings.Contains(stderr.String(), `"y_copy"`) {
		t.Fatalf("stderr %q: want a loud warning naming y_copy", stderr.String())
	}
	t.Logf("stderr: %s", stderr.String())
	md, err := data.ReadMetadata(out)
	if err != nil || md["label_like_columns_allowed"] != `["y_copy"]` {
		t.Fatalf("release metadata %v (%v): want label_like_columns_allowed = [\"y_copy\"]", md, err)
	}
}

// A mechanism's parameter left out is named as missing (rr without
// --epsilon said "must be in [1e-06, 100], got 0"); a value given and out
// of range is still a range error; --pet's help shows no default (none is
// refused). Nothing is written in any case.
func TestPrivatizeNeedsParameters(t *testing.T) {
	in := filepath.Join(synthDir(t, 50), data.TrainFile)
	out := filepath.Join(t.TempDir(), "r.arrow")
	cases := []struct {
		name  string
		flags []string
		want  string
	}{
		{"rr without --epsilon", []string{"--pet", "rr"}, "--epsilon: rr needs --epsilon (e.g. --pet rr --epsilon 1)"},
		{"llp_lap without --epsilon", []string{"--pet", "llp_lap", "--k", "4"}, "--epsilon: llp_lap needs --epsilon (e.g. --pet llp_lap --epsilon 1)"},
		{"llp without --k", []string{"--pet", "llp"}, "--k: llp needs --k (e.g. --pet llp --k 8)"},
		{"llp_geom without either", []string{"--pet", "llp_geom"}, "--k: llp_geom needs --k and --epsilon (e.g. --pet llp_geom --k 8 --epsilon 1)"},
		{"--epsilon 0 given", []string{"--pet", "rr", "--epsilon", "0"}, "--epsilon: must be in [1e-06, 100], got 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cli(t, userEnv(t), append([]string{"privatize", "--in", in, "--out", out}, tc.flags...)...)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatal("a file was written")
			}
		})
	}
	help, err := cli(t, nil, "privatize", "--help")
	if err != nil || !strings.Contains(help, "--pet mechanism") || strings.Contains(help, "(default none)") {
		t.Fatalf("privatize --help (%v):\n%s", err, help)
	}
}
