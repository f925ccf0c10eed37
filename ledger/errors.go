package ledger

import (
	"errors"
	"fmt"
	"strconv"

	"labelprivacy/internal/english"
)

// Sentinel errors. Each error of this package wraps one of them and says
// "ledger" once (a wrapped cause never repeats its prefix).
var (
	// ErrFormat is wrapped (via *Error) by every error about a ledger
	// file's content: foreign or earlier-format header, unparsable or
	// invalid row, a broken MAC chain (a row edited, removed or inserted),
	// a damaged, missing or stale people file, a lost CSV.
	ErrFormat = errors.New("ledger: bad privacy ledger")
	// ErrKey is wrapped by errors about the key file: missing beside a
	// ledger that has rows, unreadable, readable by others, not the key the
	// ledger was recorded with.
	ErrKey = errors.New("ledger: key")
	// ErrMismatch: a release that does not fit the ledger: another rule
	// for who a person is, another δ', another key.
	ErrMismatch = errors.New("ledger: release does not fit this ledger")
	// ErrUnknownRelease: Abort of an id the ledger has no released row for.
	ErrUnknownRelease = errors.New("ledger: unknown release")
	// ErrDuplicateRelease: Record of an id already in the ledger, or Abort
	// of an id already aborted.
	ErrDuplicateRelease = errors.New("ledger: duplicate release")
	// ErrBudget is wrapped by *BudgetError.
	ErrBudget = errors.New("ledger: privacy budget exceeded")
	// ErrInvalid is wrapped by *ParamError.
	ErrInvalid = errors.New("ledger: invalid parameter")
)

// Error reports a problem with a ledger file's content. Line is the
// 1-based line of the CSV row at fault (1 for the header), 0 for a file as
// a whole. It wraps ErrFormat and Err (nil or a cause).
type Error struct {
	Path string
	Line int
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	s := "ledger " + e.Path
	if e.Line > 0 {
		s += " line " + strconv.Itoa(e.Line)
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap makes errors.Is(err, ErrFormat) true, and exposes Err.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrFormat}
	}
	return []error{ErrFormat, e.Err}
}

func formatErr(path string, line int, format string, args ...any) error {
	return &Error{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// ParamError is an invalid argument: Param names it ("release.id",
// "delta_prime", "budget", ...).
type ParamError struct {
	Param string
	Msg   string
}

func (e *ParamError) Error() string { return "ledger: invalid " + e.Param + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *ParamError) Unwrap() error { return ErrInvalid }

// BudgetError refuses a release that would take Over people above the
// budget. AtWorst of them would reach Would, the largest total; those
// carry Current now, over Releases releases.
type BudgetError struct {
	Budget, DeltaPrime float64
	Over, AtWorst      int
	Would, Current     float64
	Releases           int
}

func (e *BudgetError) Error() string {
	people := func(n int) string { return english.Thousands(n) + " " + english.Noun(n, "person", "people") }
	s := fmt.Sprintf("release refused by the privacy budget ε ≤ %g (δ' = %g): %s would go above it", e.Budget, e.DeltaPrime, people(e.Over))
	if e.AtWorst == e.Over {
		s += fmt.Sprintf(", to ε = %.4g", e.Would)
	} else {
		s += fmt.Sprintf("; the %s most charged would reach ε = %.4g", people(e.AtWorst), e.Would)
	}
	if e.Releases == 0 {
		return "ledger: " + s + " (in their first release)"
	}
	return "ledger: " + s + fmt.Sprintf(" (they carry ε = %.4g now, over %s)", e.Current, english.Count(e.Releases, "release"))
}

// Unwrap makes errors.Is(err, ErrBudget) true.
func (e *BudgetError) Unwrap() error { return ErrBudget }
