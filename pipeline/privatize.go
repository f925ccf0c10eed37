package pipeline

import (
	"fmt"
	"path/filepath"

	"labelprivacy/data"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// PrivatizeOptions configure a release meant to leave the machine.
type PrivatizeOptions struct {
	In, Out string      // labelled input (Arrow or Parquet); release file (Arrow)
	Params  pets.Params // mechanism (Secure is set for llp_lap: the grid Laplace sampler)
	// Seed, when set, makes a reproducible release (noise "seeded"): anyone
	// who learns or guesses the seed undoes it. Nil: crypto/rand.
	Seed          *uint64
	KeepRemainder bool
	DeltaPrime    float64 // δ' of the ledger's advanced bound
}

// Privatized describes a published release.
type Privatized struct {
	Path, Ledger string
	Release      *release.Release
	Entry        pets.LedgerEntry
}

// Privatize releases the labels of o.In through the mechanism and publishes
// the shippable file at o.Out (features and release columns, random row
// order, no seed), recording it write-ahead in privacy_ledger.csv next to
// it.
func Privatize(o PrivatizeOptions) (*Privatized, error) {
	p := o.Params
	p.Secure = p.Kind == pets.LLPLap
	m, err := pets.New(p)
	if err != nil {
		return nil, err
	}
	in, err := data.ReadFrame(o.In)
	if err != nil {
		return nil, err
	}
	if in.Label == nil {
		return nil, fmt.Errorf("privatize: %s has no %q column", o.In, data.ColLabel)
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
	f, err := rel.Ship(in)
	if err != nil {
		return nil, err
	}
	ledgerPath := filepath.Join(filepath.Dir(o.Out), pets.LedgerFile)
	ledger, err := pets.NewLedger(ledgerPath, o.DeltaPrime)
	if err != nil {
		return nil, err
	}
	md := rel.Meta()
	md["source_file"] = filepath.Base(o.In)
	entry, err := release.Publish(o.Out, f, md, ledger, rel.Entry(o.Out, pets.LabelSource(in.Label), seed))
	if err != nil {
		return nil, err
	}
	return &Privatized{Path: o.Out, Ledger: ledgerPath, Release: rel, Entry: entry}, nil
}
