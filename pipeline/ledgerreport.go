package pipeline

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/ledger"
	"labelprivacy/pets"
)

// maxClassLines bounds the history classes LedgerReport lists.
const maxClassLines = 20

// LedgerReport writes what the privacy ledger at path (a ledger file, or a
// directory holding privacy_ledger.csv) says, after verifying it whole
// (its MAC chain, its people file, every person): its releases and people,
// one line per person-history class (people, releases, mechanisms and
// every bound, the largest total first) and a statement in words of the
// guarantee every person has, and the chain's head, to keep elsewhere.
// δ' = deltaPrime, or when 0 the ledger's own (fixed by its first
// release). It returns the ledger's state.
func LedgerReport(w io.Writer, path string, deltaPrime float64) (*ledger.State, error) {
	path = ledgerFile(path)
	l, err := ledger.Open(path, ledger.Options{})
	if err != nil {
		return nil, err
	}
	st, err := l.State(deltaPrime)
	if err != nil {
		return nil, err
	}
	released, aborted := 0, 0
	for _, r := range st.Rows {
		if r.Status == ledger.StatusAborted {
			aborted++
		} else {
			released++
		}
	}
	at := "the ledger's own"
	if st.DeltaPrime != st.Own {
		at = "asked; the ledger's own is " + fmtDelta(st.Own)
	}
	fmt.Fprintf(w, "ledger %s: %s (%d aborted, still counted), %s in %s; totals at δ' = %s (%s)\n",
		path, english.Count(released, "release"), aborted, people(st.People), english.CountAs(len(st.Classes), "history class", "history classes"),
		fmtDelta(st.DeltaPrime), at)
	if len(st.Classes) > 0 {
		fmt.Fprintf(w, "%12s %9s %10s %10s %10s %10s %16s  %s\n", "people", "releases", "eps_total", "basic", "drv", "drv_quad", "pld", "mechanisms")
	}
	for i, c := range st.Classes {
		if i == maxClassLines {
			fmt.Fprintf(w, "%12s … %d more classes (smaller totals)\n", "", len(st.Classes)-i)
			break
		}
		p := c.Comp
		fmt.Fprintf(w, "%12s %9d %10s %10s %10s %10s %16s  %s\n", english.Thousands(c.People), c.Releases, fmtEpsilon(p.Total),
			fmtEpsilon(p.Basic), fmtEpsilon(p.DRV), fmtEpsilon(p.DRVQuad), fmtPLD(p), mechanisms(c.Steps))
	}
	fmt.Fprintln(w, ledgerStatement(st))
	fmt.Fprintf(w, "chain head %s (keep it elsewhere: --head with it later says whether the ledger still holds it)\n", st.Head)
	return st, nil
}

// ledgerFile is the ledger CSV path names: path, or privacy_ledger.csv in
// it when it is a directory.
func ledgerFile(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return filepath.Join(path, ledger.File)
	}
	return path
}

// ErrNotHeld is wrapped when a ledger no longer holds a release or a chain
// head it once held (it was rolled back).
var ErrNotHeld = errors.New("ledger: does not hold")

// CheckHead refuses a ledger state that does not hold head, a chain head
// kept elsewhere ("N:MAC", as LedgerReport prints it): fewer than N rows,
// or another MAC at row N.
func CheckHead(st *ledger.State, head string) error {
	n, mac, ok := strings.Cut(head, ":")
	rows, err := strconv.Atoi(n)
	if !ok || err != nil || rows < 0 || (rows > 0) != (len(mac) == 64) {
		return &config.FieldError{Key: "head", Msg: fmt.Sprintf("%q is not a chain head (N:MAC, as train ledger prints it)", head)}
	}
	switch {
	case rows > len(st.Rows):
		return fmt.Errorf("%w: %s has %d rows, the head kept elsewhere %d: its last %d rows were lost (rolled back); every total "+
			"under-counts them. Restore the ledger from a backup that holds row %d", ErrNotHeld, st.Path, len(st.Rows), rows, rows-len(st.Rows), rows)
	case rows > 0 && st.Rows[rows-1].MAC != mac:
		return fmt.Errorf("%w: row %d of %s is not the one of the head kept elsewhere: the ledger was replaced or rolled back and "+
			"written since. Restore it from a backup that holds that row", ErrNotHeld, rows, st.Path)
	}
	return nil
}

// CheckReleases writes, for each release file (written by privatize, which
// records in its metadata the id and tag of the ledger row that charged it),
// whether the ledger at path still holds that row: one line each. It
// returns an error wrapping ErrNotHeld when one is not held.
func CheckReleases(w io.Writer, path string, files []string) error {
	path = ledgerFile(path)
	l, err := ledger.Open(path, ledger.Options{})
	if err != nil {
		return err
	}
	rf := make([]ledger.ReleaseFile, len(files))
	for i, f := range files {
		md, err := data.ReadMetadata(f)
		if err != nil {
			return err
		}
		sum, err := data.FileSHA256(f)
		if err != nil {
			return err
		}
		rf[i] = ledger.ReleaseFile{Path: f, ID: md[MetaLedgerRelease], Tag: md[MetaLedgerTag], SHA256: sum}
	}
	checks, err := l.CheckReleases(rf)
	if err != nil {
		return err
	}
	var bad []string
	for _, c := range checks {
		fmt.Fprintln(w, c.Explain(path))
		if !c.Verdict.OK() {
			bad = append(bad, c.File.Path)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s does not hold the %s of %s", ErrNotHeld, path, english.Noun(len(bad), "row", "rows"), strings.Join(bad, ", "))
	}
	return nil
}

// ledgerStatement says in words what a ledger guarantees each person.
func ledgerStatement(st *ledger.State) string {
	if len(st.Classes) == 0 {
		return "no release is recorded: every person's label is untouched"
	}
	worst := st.Classes[0] // largest total first
	at := 0
	for _, c := range st.Classes {
		if c.Comp.Total == worst.Comp.Total {
			at += c.People
		}
	}
	carry := fmt.Sprintf("%s people carry the most", english.Thousands(at))
	if at == 1 {
		carry = "1 person carries the most"
	}
	if math.IsInf(worst.Comp.Total, 1) {
		return fmt.Sprintf("%s of %s people had their labels released without a DP guarantee (llp or none): no finite ε bounds them",
			english.Thousands(at), english.Thousands(st.People))
	}
	return fmt.Sprintf("each person's label is (%s, %s)-label-DP over %s; %s",
		fmtEpsilon(worst.Comp.Total), fmtDelta(st.DeltaPrime), english.Count(worst.Releases, "release"), carry)
}

// mechanisms summarizes a history, e.g. "rr(ε=0.1)×40 llp_lap(ε=1)".
func mechanisms(steps []pets.Step) string {
	var names []string
	count := map[string]int{}
	for _, s := range steps {
		name := s.Kind.String()
		if s.Kind.NeedsEpsilon() {
			name += "(ε=" + strconv.FormatFloat(s.Epsilon, 'g', -1, 64) + ")"
		}
		if count[name] == 0 {
			names = append(names, name)
		}
		count[name]++
	}
	for i, n := range names {
		if count[n] > 1 {
			names[i] += "×" + strconv.Itoa(count[n])
		}
	}
	return strings.Join(names, " ")
}

func fmtEpsilon(e float64) string {
	if math.IsInf(e, 1) {
		return "inf"
	}
	return strconv.FormatFloat(e, 'g', 5, 64)
}

func fmtPLD(c pets.Composition) string {
	if math.IsInf(c.PLD, 1) || c.PLDError == 0 {
		return fmtEpsilon(c.PLD)
	}
	return fmtEpsilon(c.PLD) + " (+" + strconv.FormatFloat(c.PLDError, 'g', 2, 64) + ")"
}

// fmtDelta writes δ' compactly: 1e-6, 0.001.
func fmtDelta(d float64) string {
	s := strconv.FormatFloat(d, 'g', -1, 64)
	s = strings.Replace(s, "e-0", "e-", 1)
	return s
}

// people writes n people with commas: "1 person", "1,999 people".
func people(n int) string { return english.Thousands(n) + " " + english.Noun(n, "person", "people") }
