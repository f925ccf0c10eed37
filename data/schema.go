package data

import (
	"errors"
	"fmt"
)

// Column names of the on-disk schema (see the package doc).
const (
	ColLabel         = "label"
	ColEta           = "eta"
	ColIndices       = "indices"
	ColBagID         = "bag_id"
	ColLabelRR       = "label_rr"
	ColAlpha         = "alpha"
	ColAlphaDebiased = "alpha_debiased"
	// ColRow is the dataset row a row of a simulation release refers to
	// (int64). Only releases that stay with the raw data carry it (their
	// features are read from the dataset by row); a release meant to leave
	// the machine never does, since a row number can reveal a label when the
	// input is ordered by label.
	ColRow = "row"
	// ColPrior, ColBranch and ColStage are rr_prior's public per-row record
	// (two-stage RR with a prior): the prior P(y=1|x) the row was released
	// with (½ in stage 1, which is plain RR), the branch it took (1: the
	// prior's argmax label, 0: RR) and its stage (1 or 2).
	ColPrior  = "prior"
	ColBranch = "branch"
	ColStage  = "stage"
	// ColSoftTarget is a float training target per row derived from a
	// release (rr_prior's debiased labels): built in memory for training,
	// never part of a release file.
	ColSoftTarget = "soft_target"
	// ColARAState is the output state an attribution source's browser sent
	// (ara_event's release, uint64, in [0, k)): states are numbered so that
	// the classes 0..C−1 are the states 0..C−1, and label_rr, its
	// projection, is the state below C and C for a state that is no class.
	ColARAState = "ara_state"
)

// HiggsFeatures are the 28 UCI Higgs feature names, in file order (columns
// 2–29 of HIGGS.csv; column 1 is the label).
var HiggsFeatures = []string{
	"lepton_pT", "lepton_eta", "lepton_phi",
	"missing_energy_magnitude", "missing_energy_phi",
	"jet1_pt", "jet1_eta", "jet1_phi", "jet1_b_tag",
	"jet2_pt", "jet2_eta", "jet2_phi", "jet2_b_tag",
	"jet3_pt", "jet3_eta", "jet3_phi", "jet3_b_tag",
	"jet4_pt", "jet4_eta", "jet4_phi", "jet4_b_tag",
	"m_jj", "m_jjj", "m_lv", "m_jlv", "m_bb", "m_wbb", "m_wwbb",
}

// Sentinel errors; match with errors.Is.
var (
	ErrMalformed = errors.New("data: malformed input")
	ErrInvalid   = errors.New("data: invalid value")
	ErrLabel     = errors.New("data: label out of range")
	ErrEmpty     = errors.New("data: empty input")
	ErrSchema    = errors.New("data: unexpected schema")
	// ErrCorrupt: a file could not be decoded (truncated, damaged, not the
	// format its name says); the error names the file.
	ErrCorrupt = errors.New("data: damaged file")
	// ErrMismatch: the files of one dataset disagree (test.arrow's columns
	// differ from train.arrow's, or their rows from meta.json's).
	ErrMismatch = errors.New("data: dataset files disagree")
	// ErrNoSpace: an output would not fit on its filesystem (*SpaceError).
	ErrNoSpace = errors.New("data: not enough disk space")
)

// LineError reports a bad input line; it wraps one of the sentinels above.
type LineError struct {
	File string // input path as given
	Line int64  // 1-based line number
	Err  error  // wraps ErrMalformed, ErrInvalid or ErrLabel
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }
