package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// PrivatizeOptions configure a release meant to leave the machine.
type PrivatizeOptions struct {
	In, Out string      // labelled input (Arrow or Parquet); release file (Arrow IPC: .arrow, .feather, .ipc)
	Params  pets.Params // mechanism (Secure is set for llp_lap: the grid Laplace sampler)
	// Seed, when set, makes a reproducible release (noise "seeded"): anyone
	// who learns or guesses the seed undoes it. Nil: crypto/rand.
	Seed          *uint64
	KeepRemainder bool
	DeltaPrime    float64 // δ' of the ledger's (ε, δ') totals
	// Ledger is the privacy ledger's file; empty: privacy_ledger.csv in
	// the directory of In (the ledger stays with the raw data).
	Ledger string
	// IDColumn names In's column identifying people (not a feature, never
	// shipped); empty: a person is known by its feature values.
	IDColumn string
	// Budget refuses a release that would take anyone above this ε (at
	// DeltaPrime); 0: no budget.
	Budget float64
	// Force replaces an existing Out (never In, a dataset's file or a file
	// beside the ledger).
	Force bool
}

// Privatized describes a published release.
type Privatized struct {
	Path, Ledger string
	Release      *release.Release
	Entry        pets.LedgerEntry
}

// ErrRefused is wrapped by privatize's refusals of an Out.
var ErrRefused = errors.New("privatize: refused")

// refuse refuses PrivatizeOptions.Out: a *config.FieldError naming the
// option "out" (and, in its message, other options as `key`), wrapped in
// ErrRefused.
func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrRefused, &config.FieldError{Key: "out", Msg: fmt.Sprintf(format, args...)})
}

// releaseExts are the file names privatize writes (all Arrow IPC files).
var releaseExts = []string{".arrow", ".feather", ".ipc"}

// ledgerPathFor is the default ledger of a labelled file: privacy_ledger.csv
// in its directory.
func ledgerPathFor(in string) string { return filepath.Join(filepath.Dir(in), pets.LedgerFile) }

// Privatize releases the labels of o.In through the mechanism and publishes
// the shippable file at o.Out (features and release columns, random row
// order, no seed), recording it write-ahead in the privacy ledger (beside
// the input by default), per person. It refuses, before writing anything,
// an ε outside [config.MinEpsilon, MaxEpsilon], an Out that is the input, lies in
// a dataset directory or in the ledger's directory (or one holding a
// ledger), is not named .arrow/.feather/.ipc, or exists (unless Force),
// and, with a budget, a release that would take anyone above it.
func Privatize(o PrivatizeOptions) (*Privatized, error) {
	p := o.Params
	p.Secure = p.Kind == pets.LLPLap
	if p.Kind == pets.RRPrior {
		return nil, &config.FieldError{Key: "mechanism", Msg: "rr_prior trains a prior model between its two stages; it runs inside " +
			"train run/fit/sweep (pets: [{mechanism: rr_prior, epsilon: [1]}]), not in privatize"}
	}
	if p.Kind.NeedsEpsilon() {
		if err := config.CheckEpsilon(p.Epsilon); err != nil {
			return nil, paramField(err)
		}
	}
	m, err := pets.New(p)
	if err != nil {
		return nil, paramField(err)
	}
	ledgerPath := o.Ledger
	if ledgerPath == "" {
		ledgerPath = ledgerPathFor(o.In)
	}
	if err := checkOut(o.In, o.Out, ledgerPath, o.Force); err != nil {
		return nil, err
	}
	ledger, err := pets.NewLedger(ledgerPath, o.DeltaPrime)
	if err != nil {
		return nil, err
	}
	if err := ledger.SetBudget(o.Budget); err != nil {
		return nil, err
	}
	in, ids, err := data.ReadFrameWithIDs(o.In, o.IDColumn)
	if err != nil {
		return nil, err
	}
	if in.Label == nil {
		return nil, fmt.Errorf("privatize: %s has no %q column", o.In, data.ColLabel)
	}
	keys, err := ledger.Keys()
	if err != nil {
		return nil, err
	}
	opts := release.Options{Noise: pets.NoiseSecure, KeepRemainder: o.KeepRemainder}
	var seed uint64
	if o.Seed != nil {
		seed = *o.Seed
		opts.Noise, opts.Seed = pets.NoiseSeeded, seed
	}
	rel, err := release.Apply(in.Label, m, opts)
	if err != nil {
		return nil, err
	}
	entry := rel.Entry(o.Out, seed)
	entry.Input, _ = filepath.Abs(o.In)
	entry.Labels, entry.KeyCheck = keys.Labels(in.Label), keys.Check()
	entry.People = coveredPeople(personKeys(keys, in, ids, domainRaw), rel.Covered())
	if o.Budget > 0 {
		if err := ledger.Check(&entry); err != nil { // before anything is written
			return nil, err
		}
	}
	f, err := rel.Ship(in)
	if err != nil {
		return nil, err
	}
	md := rel.Meta()
	row, err := release.Publish(o.Out, f, md, ledger, entry)
	if err != nil {
		return nil, err
	}
	return &Privatized{Path: o.Out, Ledger: ledgerPath, Release: rel, Entry: row}, nil
}

// checkOut refuses an out that would destroy data or ship the ledger.
func checkOut(in, out, ledger string, force bool) error {
	absIn, err := filepath.Abs(in)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	outDir := filepath.Dir(absOut)
	stIn, inErr := os.Stat(absIn)
	stOut, outErr := os.Lstat(absOut)
	switch {
	case absIn == absOut || (inErr == nil && outErr == nil && os.SameFile(stIn, stOut)):
		return refuse("%s is the input `in` %s: privatize never overwrites its input", out, in)
	case fileExists(filepath.Join(outDir, data.MetaFile)):
		return refuse("%s is in the dataset directory %s (it holds %s): privatize never writes into a dataset; "+
			"write the release to a folder of its own", out, filepath.Dir(out), data.MetaFile)
	case sameDir(outDir, filepath.Dir(ledger)):
		return refuse("%s is in the folder of the privacy ledger %s: the ledger and its key would ship with the "+
			"release; write the release to a folder of its own (or keep the ledger elsewhere with `ledger`)", out, ledger)
	case fileExists(filepath.Join(outDir, pets.LedgerFile)):
		return refuse("%s is in a folder that holds a privacy ledger (%s): it would ship with the release; "+
			"move the ledger next to the raw data (and name it with `ledger`) or write the release elsewhere",
			out, filepath.Join(filepath.Dir(out), pets.LedgerFile))
	}
	ext := strings.ToLower(filepath.Ext(out))
	okExt := false
	for _, e := range releaseExts {
		okExt = okExt || ext == e
	}
	if !okExt {
		return refuse("%s: privatize writes Arrow IPC files; name it .arrow (or .feather, .ipc); "+
			"it does not write Parquet (pyarrow converts: pq.write_table(pa.ipc.open_file(f).read_all(), …))", out)
	}
	switch {
	case outErr == nil && !stOut.Mode().IsRegular():
		return refuse("%s exists and is not a regular file", out)
	case outErr == nil && !force:
		return refuse("%s exists: privatize never replaces a file unless `force` is given", out)
	case outErr != nil && !errors.Is(outErr, fs.ErrNotExist):
		return &config.FieldError{Key: "out", Msg: outErr.Error()}
	}
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// sameDir reports whether a and b name the same directory (also through
// links); two missing directories compare by cleaned absolute path.
func sameDir(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	aa, _ := filepath.Abs(a)
	bb, _ := filepath.Abs(b)
	return aa == bb
}

// paramField turns a mechanism parameter error into a *config.FieldError naming
// the parameter ("epsilon", "k", "mechanism"), so a caller can name its
// own flag or key.
func paramField(err error) error {
	var pe *pets.ParamError
	if errors.As(err, &pe) {
		key := pe.Param
		if key == "kind" || key == "secure" {
			key = "mechanism"
		}
		return &config.FieldError{Key: key, Msg: pe.Msg}
	}
	return err
}
