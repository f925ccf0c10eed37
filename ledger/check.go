package ledger

import (
	"crypto/hmac"
	"fmt"
)

// ReleaseFile is what a release file says of the ledger row that charged
// it: the id and tag its metadata records (Keys.ReleaseTag) and the SHA-256
// of its bytes.
type ReleaseFile struct {
	Path, ID, Tag, SHA256 string
}

// Verdict is what a ledger says of a release file.
type Verdict uint8

// The verdicts of CheckReleases.
const (
	Held        Verdict = iota // the ledger holds the file's row, with the file's SHA-256
	HeldAborted                // it holds the row, marked aborted (still counted), yet the file exists
	Missing                    // the tag is this ledger's, but the ledger lacks the row: it was rolled back
	Changed                    // the ledger holds the row with another SHA-256: the file is not the one recorded
	Foreign                    // the tag is not this ledger's: the file was recorded by another ledger (or key)
	Unnamed                    // the file names no ledger row (an earlier version's release, or not a release)
)

// OK reports whether the ledger still counts the file's release.
func (v Verdict) OK() bool { return v == Held || v == HeldAborted }

func (v Verdict) String() string {
	switch v {
	case Held:
		return "held"
	case HeldAborted:
		return "held (aborted, still counted)"
	case Missing:
		return "MISSING"
	case Changed:
		return "CHANGED"
	case Foreign:
		return "NOT THIS LEDGER'S"
	}
	return "UNNAMED"
}

// ReleaseCheck is the verdict on one release file.
type ReleaseCheck struct {
	File    ReleaseFile
	Verdict Verdict
	Row     Row // the ledger's row (Held, HeldAborted, Changed)
	Line    int // its line in the CSV (0 for none)
}

// Explain says the verdict in words, naming the file and the row.
func (c ReleaseCheck) Explain(ledgerPath string) string {
	f := c.File
	switch c.Verdict {
	case Held:
		return fmt.Sprintf("%s: held: %s line %d, release %s (%s, %s) with its SHA-256", f.Path, ledgerPath, c.Line, f.ID, c.Row.Mechanism, c.Row.Time.Format("2006-01-02 15:04:05Z"))
	case HeldAborted:
		return fmt.Sprintf("%s: held: %s line %d, release %s, marked aborted (its charge counts; the file should not exist: %s)", f.Path, ledgerPath, c.Line, f.ID, c.Row.Reason)
	case Missing:
		return fmt.Sprintf("%s: MISSING: %s was recorded by this ledger (its tag verifies under the key) as release %s, but the ledger no "+
			"longer holds that row: the ledger was rolled back (its files restored from an older backup, or truncated); every total "+
			"under-counts this release. Restore the ledger from a backup that holds it", f.Path, f.Path, f.ID)
	case Changed:
		return fmt.Sprintf("%s: CHANGED: %s line %d records release %s with SHA-256 %s, the file has %s: it is not the file that was recorded",
			f.Path, ledgerPath, c.Line, f.ID, c.Row.SHA256, f.SHA256)
	case Foreign:
		return fmt.Sprintf("%s: NOT THIS LEDGER'S: its tag does not verify under %s's key: the release was recorded in another ledger", f.Path, ledgerPath)
	}
	return fmt.Sprintf("%s: UNNAMED: its metadata names no ledger row (a release of an earlier version, or not a release of privatize)", f.Path)
}

// CheckReleases says, for each release file, whether the ledger (verified
// whole: chain, chain head, people file) still holds the row that charged
// it.
func (l *Ledger) CheckReleases(files []ReleaseFile) ([]ReleaseCheck, error) {
	ld, err := l.open(false)
	if err != nil {
		return nil, err
	}
	defer ld.close()
	out := make([]ReleaseCheck, len(files))
	for i, f := range files {
		c := ReleaseCheck{File: f}
		j, ok := ld.byID[f.ID] // every aborted row follows its released row (parseCSV)
		switch {
		case f.ID == "" || f.Tag == "":
			c.Verdict = Unnamed
		case !hmac.Equal([]byte(ld.keys.ReleaseTag(f.ID)), []byte(f.Tag)):
			c.Verdict = Foreign
		case !ok:
			c.Verdict = Missing
		default:
			c.Row, c.Line = ld.csv.rows[j], j+2
			if ld.aborted[f.ID] {
				for k := len(ld.csv.rows) - 1; k >= 0; k-- {
					if r := ld.csv.rows[k]; r.ID == f.ID && r.Status == StatusAborted {
						c.Row, c.Line = r, k+2
						break
					}
				}
			}
			switch {
			case c.Row.SHA256 != f.SHA256:
				c.Verdict = Changed
			case ld.aborted[f.ID]:
				c.Verdict = HeldAborted
			default:
				c.Verdict = Held
			}
		}
		out[i] = c
	}
	return out, nil
}
