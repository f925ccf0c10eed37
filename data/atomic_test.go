package data

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadPid returns the pid of a process that has exited (and been reaped).
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// livePid starts a process that stays alive until the test ends.
func livePid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBlock$")
	cmd.Env = append(os.Environ(), "LABELPRIVACY_HELPER=block")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// TestHelperBlock is not a test: the subprocess of livePid.
func TestHelperBlock(t *testing.T) {
	if os.Getenv("LABELPRIVACY_HELPER") != "block" {
		t.Skip("helper process")
	}
	time.Sleep(time.Hour)
}

// A writer removes the temporaries of its own target left by dead processes
// of its host, and nothing else.
func TestStaleTempsRemoved(t *testing.T) {
	host := strings.SplitN(tempOwner, "~", 2)[0]
	dead, live := deadPid(t), livePid(t)
	name := func(target, host string, pid int) string {
		return "." + target + ".tmp-" + host + "~" + strconv.Itoa(pid) + "~123"
	}
	tests := []struct {
		name   string
		file   string
		age    time.Duration
		remove bool
	}{
		{"this host, dead pid", name(TrainFile, host, dead), 0, true},
		{"this host, live pid", name(TrainFile, host, live), 0, false},
		{"this host, this process", name(TrainFile, host, os.Getpid()), 0, false},
		{"other host, dead pid", name(TrainFile, "other-host@4026531836", dead), 0, false},
		{"same host name, other pid namespace", name(TrainFile, host+"7", dead), 0, false},
		{"other target, dead pid", name(TestFile, host, dead), 0, false},
		{"legacy name, fresh", "." + TrainFile + ".tmp-2718281828", 0, false},
		{"legacy name, two days old", "." + TrainFile + ".tmp-3141592653", 48 * time.Hour, true},
		{"not our name, old", "." + TrainFile + ".tmp-notes", 48 * time.Hour, false},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		p := writeFile(t, dir, tc.file, []byte("partial"))
		if tc.age > 0 {
			old := time.Now().Add(-tc.age)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := WriteFileAtomic(filepath.Join(dir, TrainFile), []byte("complete")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(dir, tc.file))
			if removed := os.IsNotExist(err); removed != tc.remove {
				t.Fatalf("%s: removed = %v, want %v", tc.file, removed, tc.remove)
			}
		})
	}
}

// Temporaries are named after their owner: host and pid.
func TestTempNameNamesOwner(t *testing.T) {
	f, err := createTemp(filepath.Join(t.TempDir(), TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	f.Close()
	rest, ok := strings.CutPrefix(filepath.Base(f.Name()), "."+TrainFile+".tmp-")
	host, _ := os.Hostname()
	if !ok || !strings.Contains(rest, "~"+strconv.Itoa(os.Getpid())+"~") || !strings.HasPrefix(rest, strings.SplitN(host, ".", 2)[0]) {
		t.Fatalf("temporary %s does not name its owner (host %s, pid %d)", f.Name(), host, os.Getpid())
	}
}

// kill -9 during an import leaves a temporary dataset directory next to
// the target and nothing at the target; the next import into the same
// directory removes it and leaves exactly the dataset's three files.
func TestKilledImportTempsRemovedByRerun(t *testing.T) {
	dir := t.TempDir()
	in := killInput(t, dir)
	out := filepath.Join(dir, "ds")
	killImportMidway(t, in, out)
	if left := entries(t, dir); len(left) != 2 || left[1] != "in.libsvm" || !strings.HasPrefix(left[0], ".ds.tmp-") {
		t.Fatalf("after kill -9 the parent holds %v, want in.libsvm and one temporary dataset directory", left)
	}
	if _, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: out, TestRows: 10, HashBuckets: 100}); err != nil {
		t.Fatal(err)
	}
	if left, want := entries(t, out), []string{MetaFile, TestFile, TrainFile}; !slices.Equal(left, want) {
		t.Fatalf("after the rerun the directory holds %v, want %v", left, want)
	}
	if left := entries(t, dir); !slices.Equal(left, []string{"ds", "in.libsvm"}) {
		t.Fatalf("after the rerun the parent holds %v", left)
	}
}

// A re-import into an existing dataset directory replaces it as a whole: a
// kill -9 midway leaves the old dataset complete and verified (never new
// files beside old ones), a finished one the new dataset, and the files
// kept with the raw data (the privacy ledger) stay, same inode, through
// both.
func TestReimportIsAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ds")
	first := writeFile(t, dir, "first.libsvm", []byte("1 1:1\n0 2:1\n1 3:1\n0 4:1\n"))
	if _, err := ImportLibSVM(context.Background(), ImportOptions{In: first, Out: out, TestRows: 2, HashBuckets: 100}); err != nil {
		t.Fatal(err)
	}
	oldID, err := DatasetIdentity(out)
	if err != nil {
		t.Fatal(err)
	}
	ledger := writeFile(t, out, "privacy_ledger.csv", []byte("rows\n"))
	before, _ := os.Stat(ledger)

	killImportMidway(t, killInput(t, dir), out)
	ds, err := Load(out)
	if err != nil || ds.ID != oldID {
		t.Fatalf("after a killed re-import: %v (identity %v, want the old %s)", err, ds, oldID)
	}
	if left := entries(t, out); !slices.Equal(left, []string{identityCacheFile, MetaFile, "privacy_ledger.csv", TestFile, TrainFile}) {
		t.Fatalf("after a killed re-import the directory holds %v", left)
	}

	if _, err := ImportLibSVM(context.Background(), ImportOptions{In: killInput(t, dir), Out: out, TestRows: 10, HashBuckets: 100}); err != nil {
		t.Fatal(err)
	}
	ds, err = Load(out)
	if err != nil || ds.ID == oldID || ds.Train.Rows != chunkRows+90 {
		t.Fatalf("after the re-import: %v (identity %v)", err, ds)
	}
	after, err := os.Stat(filepath.Join(out, "privacy_ledger.csv"))
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the ledger did not stay with the data: %v", err)
	}
	if left := entries(t, dir); !slices.Equal(left, []string{"ds", "first.libsvm", "in.libsvm"}) {
		t.Fatalf("after the re-import the parent holds %v (the old dataset must be gone)", left)
	}
}

// killInput writes a libsvm input of more than one import chunk.
func killInput(t *testing.T, dir string) string {
	var lines strings.Builder
	for i := range chunkRows + 100 {
		fmt.Fprintf(&lines, "%d %d:1\n", i%2, i%50+1)
	}
	return writeFile(t, dir, "in.libsvm", []byte(lines.String()))
}

// killImportMidway starts an import of in into out in a subprocess and
// kills it (SIGKILL: no cleanup runs) once its first chunk is written.
func killImportMidway(t *testing.T, in, out string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperImportThenHang$")
	cmd.Env = append(os.Environ(), "LABELPRIVACY_HELPER=import", "HELPER_IN="+in, "HELPER_OUT="+out)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "first chunk written\n" {
		cmd.Process.Kill()
		t.Fatalf("helper said %q, %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestHelperImportThenHang is not a test: the subprocess of
// TestKilledImportTempsRemovedByRerun. It imports until the first chunk is
// written, says so, and hangs until killed.
func TestHelperImportThenHang(t *testing.T) {
	if os.Getenv("LABELPRIVACY_HELPER") != "import" {
		t.Skip("helper process")
	}
	ImportLibSVM(context.Background(), ImportOptions{In: os.Getenv("HELPER_IN"), Out: os.Getenv("HELPER_OUT"), TestRows: 10, HashBuckets: 100,
		Progress: func(ImportProgress) {
			fmt.Println("first chunk written")
			time.Sleep(time.Hour)
		}})
}
