package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// firstHour is the first sh block under README's "## A first hour": its
// commands, one per entry, lines ending in \ joined.
func firstHour(t *testing.T, readme string) []string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n## A first hour\n")
	_, block, ok2 := strings.Cut(after, "\n```sh\n")
	block, _, ok3 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no sh block under ## A first hour")
	}
	var cmds []string
	var cur strings.Builder
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasSuffix(l, `\`) {
			cur.WriteString(strings.TrimSuffix(l, `\`) + " ")
			continue
		}
		cur.WriteString(l)
		if c := strings.TrimSpace(cur.String()); c != "" {
			cmds = append(cmds, c)
		}
		cur.Reset()
	}
	return cmds
}

// sbatchArray is the array of an sbatch script: its task count.
var sbatchArray = regexp.MustCompile(`(?m)^#SBATCH --array=0-(\d+)$`)

// README's "A first hour" runs as written, in order, in a fresh directory
// holding a copy of configs/: `go build` builds this package into it,
// `less` must find its file, `sbatch SCRIPT` runs the script once per array
// task (SLURM_ARRAY_TASK_ID set, as Slurm would) and the pandas line runs
// when python3 has pandas. Each command must succeed, the sweep must find
// the grid done, and the summary the last one writes must hold every
// setting of the config with 3 trials each and a finite SE (the tour once
// audited with trials 1 and left 10 of its 15 runs "outside the grid").
func TestReadmeFirstHour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the tour: about 20 models")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmds := firstHour(t, filepath.Join(root, "README.md"))
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "configs"), os.DirFS(filepath.Join(root, "configs"))); err != nil {
		t.Fatal(err)
	}
	sh := func(t *testing.T, line string, env ...string) string {
		t.Helper()
		cmd := exec.Command(bash, "-eo", "pipefail", "-c", line)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		return string(out)
	}
	var last string // the output of the last train command
	ran := map[string]bool{}
	step := func(line string) {
		word := strings.Fields(line)[0]
		ran[word] = true
		switch {
		case word == "go":
			// The binary the line builds, from this checkout, where the tour runs.
			if !strings.HasPrefix(line, "go build -o train ./cmd/train") {
				t.Fatalf("the tour builds %q; this test builds go build -o train ./cmd/train", line)
			}
			cmd := exec.Command(goBin, "build", "-o", filepath.Join(dir, "train"), "./cmd/train")
			cmd.Dir, cmd.Env = root, append(os.Environ(), "HOME="+userHome) // the user's Go caches: a fresh HOME would rebuild (and download) everything
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
		case word == "less":
			if st, err := os.Stat(filepath.Join(dir, strings.Fields(line)[1])); err != nil || st.Size() == 0 {
				t.Fatalf("%s: %v", line, err)
			}
		case word == "python3":
			if exec.Command("python3", "-c", "import pandas").Run() != nil {
				t.Log("no python3 with pandas: the CSV is read in Go below")
				return
			}
			sh(t, line)
		default:
			cmd, sbatch, isSbatch := strings.Cut(line, " && sbatch ")
			last = sh(t, cmd)
			if !isSbatch {
				return
			}
			script := strings.Fields(sbatch)[0]
			b, err := os.ReadFile(filepath.Join(dir, script))
			m := sbatchArray.FindSubmatch(b)
			if err != nil || m == nil {
				t.Fatalf("%s: no array script (%v)", line, err)
			}
			n, _ := strconv.Atoi(string(m[1]))
			for i := range n + 1 {
				out := sh(t, "bash "+script, fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", i), fmt.Sprintf("SLURM_ARRAY_TASK_COUNT=%d", n+1), "SLURM_ARRAY_TASK_MIN=0")
				if !strings.Contains(out, fmt.Sprintf("shard %d/%d (from Slurm array task)", i, n+1)) {
					t.Fatalf("array task %d:\n%s", i, out)
				}
			}
		}
	}
	for _, line := range cmds {
		start := time.Now()
		step(line)
		t.Logf("%5.1f s  %s", time.Since(start).Seconds(), line)
	}
	for _, w := range []string{"go", "./train", "less", "sed", "python3"} {
		if !ran[w] {
			t.Errorf("the tour has no %s command any more: update this test", w)
		}
	}
	if strings.Contains(last, "outside the grid") {
		t.Errorf("the last command left runs outside the grid:\n%s", last)
	}
	checkTourSummary(t, filepath.Join(dir, "results", "my", "summary.csv"))
}

// checkTourSummary: the tour's summary has the quickstart's 5 settings,
// each of 3 trials with a finite SE of its AUC.
func checkTourSummary(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %d rows (%v)", path, len(rows), err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if len(rows)-1 != 5 {
		t.Errorf("%s: %d settings, want the quickstart's 5", path, len(rows)-1)
	}
	for _, r := range rows[1:] {
		se, err := strconv.ParseFloat(r[col["auc_se"]], 64)
		if r[col["n_trials"]] != "3" || err != nil || math.IsNaN(se) || math.IsInf(se, 0) {
			t.Errorf("%s: setting %s has n_trials %s, auc_se %s; want 3 trials and a finite SE", path, r[col["setting"]], r[col["n_trials"]], r[col["auc_se"]])
		}
	}
}
