package data

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"labelprivacy/internal/mix"
)

// HiggsColumns is the number of comma-separated fields in a UCI HIGGS.csv
// line: the label then 28 features.
const HiggsColumns = 1 + 28

// str views b as a string without copying (b must not change while in use).
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// notPlainDecimal reports whether field, which strconv.ParseFloat accepted,
// uses Go's literal syntax beyond a plain decimal number: a hexadecimal
// float (0x1p3) or digit separators (1_000). CSV and libsvm numbers are
// plain decimals ([+-]digits[.digits][e[+-]digits]); a file holding Go
// literals is not the file the importer was written for.
func notPlainDecimal(field []byte) bool {
	f := field
	if len(f) > 0 && (f[0] == '+' || f[0] == '-') {
		f = f[1:]
	}
	return len(f) > 1 && f[0] == '0' && f[1]|0x20 == 'x' || bytes.IndexByte(field, '_') >= 0
}

// errNotDecimal is the ErrMalformed error of a non-decimal number.
func errNotDecimal(where string, field []byte) error {
	return fmt.Errorf("%w: %s: %q is not a plain decimal number (no hexadecimal floats, no '_' digit separators)", ErrMalformed, where, field)
}

// ParseHiggsLine parses one UCI Higgs line ("1.000000000000000000e+00,8.69e-01,...")
// into its 0/1 label and 28 float32 features written to feats (len ≥ 28).
// Numbers are plain decimals (notPlainDecimal).
// Errors wrap ErrMalformed (field count, number syntax), ErrInvalid (NaN,
// ±Inf, or a number beyond float32's ±3.4e38: droppable with DropInvalid) or
// ErrLabel and name the 1-based column.
func ParseHiggsLine(line []byte, feats []float32) (uint8, error) {
	line = bytes.TrimRight(line, "\r\n")
	var label uint8
	col := 0
	for start := 0; ; col++ {
		end := bytes.IndexByte(line[start:], ',')
		last := end < 0
		if last {
			end = len(line)
		} else {
			end += start
		}
		if col >= HiggsColumns {
			return 0, fmt.Errorf("%w: more than %d columns", ErrMalformed, HiggsColumns)
		}
		field := line[start:end]
		v, err := strconv.ParseFloat(str(field), 32)
		switch {
		case err == nil && notPlainDecimal(field):
			return 0, errNotDecimal(fmt.Sprintf("column %d", col+1), field)
		case err == nil:
		case len(field) == 0:
			return 0, fmt.Errorf("%w: column %d is empty", ErrMalformed, col+1)
		case errors.Is(err, strconv.ErrRange) && col > 0:
			// A number, but beyond ±3.4e38: float32 would hold ±Inf.
			return 0, fmt.Errorf("%w: column %d: %q is out of float32 range", ErrInvalid, col+1, field)
		case errors.Is(err, strconv.ErrRange):
		default:
			return 0, fmt.Errorf("%w: column %d: %q is not a number", ErrMalformed, col+1, field)
		}
		if col == 0 {
			switch v {
			case 0:
				label = 0
			case 1:
				label = 1
			default:
				return 0, fmt.Errorf("%w: column 1: label %q is not 0 or 1", ErrLabel, field)
			}
		} else {
			if math.IsNaN(v) {
				return 0, fmt.Errorf("%w: column %d is %q (not a number)", ErrInvalid, col+1, field)
			}
			if math.IsInf(v, 0) {
				return 0, fmt.Errorf("%w: column %d is %q (infinite)", ErrInvalid, col+1, field)
			}
			feats[col-1] = float32(v)
		}
		if last {
			break
		}
		start = end + 1
	}
	if col+1 != HiggsColumns {
		return 0, fmt.Errorf("%w: %d columns, want %d", ErrMalformed, col+1, HiggsColumns)
	}
	return label, nil
}

// HashIndex maps a libsvm feature index to one of buckets hash buckets:
//
//	bucket = splitmix64(index) mod buckets
//
// where splitmix64 is the finalizer of Steele et al.'s SplitMix64 (the
// constants 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB):
// fixed, seedless and cheap, so a bucket id means the same thing in every
// dataset and tool version. Distinct indices of one row that collide in a
// bucket are all kept (an embedding-sum model then adds that bucket's
// embedding once per index) and counted (LibSVMLine.Collisions).
func HashIndex(index uint64, buckets uint32) uint32 {
	return uint32(mix.SplitMix64(index) % uint64(buckets))
}

// LibSVMLine is one parsed libsvm line.
type LibSVMLine struct {
	Label     uint8    // binary: 0/1 (-1 and +1 map to 0 and 1); C ≥ 3 classes: the class 0..C−1
	Value     float64  // ParseLibSVMLineValue: the real label as written
	Indices   []uint32 // hashed buckets of the non-zero features, in line order
	NonBinary int      // non-zero values other than 1 (treated as presence)
	// Duplicates counts non-zero entries whose raw index appeared earlier on
	// the line ("3:1 3:1"): they are dropped, the first one is kept.
	Duplicates int
	// Collisions counts kept entries whose bucket equals that of an earlier,
	// different raw index on the line: the bucket then appears twice in
	// Indices, as the hashing dictates.
	Collisions int

	raw []uint64 // raw indices of Indices
}

// dedupScan is the row length up to which duplicates are found by a linear
// scan (KDD Cup 2012 rows hold 11 indices); longer rows use maps.
const dedupScan = 32

// ParseLibSVMLine parses "label idx:val idx:val ..." (space or tab
// separated; labels 0/1 or -1/+1; indices ≥ 1 as in the libsvm collection)
// appending hashed indices to dst.Indices[:0]. Zero values are skipped
// (explicitly absent); other finite values count as presence. A repeated
// index keeps its first non-zero entry (counted in Duplicates). A trailing
// "# comment" is ignored.
func ParseLibSVMLine(line []byte, buckets uint32, dst *LibSVMLine) error {
	return ParseLibSVMLineClasses(line, buckets, 2, dst)
}

// ParseLibSVMLineClasses is ParseLibSVMLine for labels of classes classes
// (2..MaxClasses; 0 means 2). With 2 it is ParseLibSVMLine; with C ≥ 3
// the label is a class 0..C−1 written as a decimal integer (optionally
// with ".0", as some tools write labels), and any other label, -1 and C
// included, is an ErrLabel error naming it and the classes.
func ParseLibSVMLineClasses(line []byte, buckets uint32, classes int, dst *LibSVMLine) error {
	if err := CheckClasses(classes); err != nil {
		return err
	}
	return parseLibSVM(line, buckets, dst, func(tok []byte) error {
		y, err := parseClassLabel(tok, classes)
		dst.Label = y
		return err
	})
}

// ParseLibSVMLineValue is ParseLibSVMLine for a real label (the libsvm
// regression datasets' convention: a real number first on the line), a
// plain decimal written to dst.Value as it is (the importer refuses NaN,
// ±Inf and negative values and snaps the others to its grid).
func ParseLibSVMLineValue(line []byte, buckets uint32, dst *LibSVMLine) error {
	return parseLibSVM(line, buckets, dst, func(tok []byte) error {
		v, err := parseRealLabel(tok)
		dst.Value = v
		return err
	})
}

// parseClassLabel parses a label of classes classes: 0/1 or -1/+1 for two,
// a class 0..C−1 for C ≥ 3 (an ErrLabel error otherwise).
func parseClassLabel(tok []byte, classes int) (uint8, error) {
	if classes > 2 {
		y, ok := parseClass(tok, classes)
		if !ok {
			return 0, fmt.Errorf("%w: label %q is not a class 0..%d (%s %d)", ErrLabel, tok, classes-1, MetaClasses, classes)
		}
		return y, nil
	}
	switch str(tok) {
	case "1", "+1", "1.0":
		return 1, nil
	case "0", "-1", "0.0", "-1.0":
		return 0, nil
	}
	return 0, fmt.Errorf("%w: label %q is not 0/1 or -1/+1", ErrLabel, tok)
}

// parseRealLabel parses a real label, a plain decimal number (NaN and ±Inf
// are read, for the importer to refuse by name).
func parseRealLabel(tok []byte) (float64, error) {
	v, err := strconv.ParseFloat(str(tok), 64)
	switch {
	case err == nil && notPlainDecimal(tok):
		return 0, errNotDecimal("label", tok)
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%w: label %q is out of float64 range", ErrLabel, tok)
	case err != nil:
		return 0, fmt.Errorf("%w: label %q is not a number", ErrMalformed, tok)
	}
	return v, nil
}

// parseLibSVM parses a libsvm line whose label label parses.
func parseLibSVM(line []byte, buckets uint32, dst *LibSVMLine, label func([]byte) error) error {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	dst.Indices, dst.raw = dst.Indices[:0], dst.raw[:0]
	dst.NonBinary, dst.Duplicates, dst.Collisions = 0, 0, 0
	var seen map[uint64]bool
	var used map[uint32]bool
	tok, rest := nextToken(line)
	if len(tok) == 0 {
		return fmt.Errorf("%w: empty line", ErrMalformed)
	}
	if err := label(tok); err != nil {
		return err
	}
	for field := 2; ; field++ {
		tok, rest = nextToken(rest)
		if len(tok) == 0 {
			return nil
		}
		colon := bytes.IndexByte(tok, ':')
		if colon <= 0 || colon == len(tok)-1 {
			return fmt.Errorf("%w: field %d: %q is not index:value", ErrMalformed, field, tok)
		}
		idx, err := strconv.ParseUint(str(tok[:colon]), 10, 64)
		if err != nil || idx == 0 {
			return fmt.Errorf("%w: field %d: index %q is not an integer ≥ 1", ErrMalformed, field, tok[:colon])
		}
		val, err := strconv.ParseFloat(str(tok[colon+1:]), 64)
		switch {
		case err == nil && notPlainDecimal(tok[colon+1:]):
			return errNotDecimal(fmt.Sprintf("field %d: value", field), tok[colon+1:])
		case errors.Is(err, strconv.ErrRange): // beyond ±1.8e308
			return fmt.Errorf("%w: field %d: value %q is out of float64 range", ErrInvalid, field, tok[colon+1:])
		case err != nil:
			return fmt.Errorf("%w: field %d: value %q is not a number", ErrMalformed, field, tok[colon+1:])
		}
		if math.IsNaN(val) || math.IsInf(val, 0) {
			return fmt.Errorf("%w: field %d: value %q", ErrInvalid, field, tok[colon+1:])
		}
		if val == 0 {
			continue
		}
		b := HashIndex(idx, buckets)
		dup, coll := false, false
		if n := len(dst.raw); n < dedupScan {
			for j, r := range dst.raw {
				dup = dup || r == idx
				coll = coll || dst.Indices[j] == b
			}
		} else {
			if seen == nil {
				seen, used = make(map[uint64]bool, 2*n), make(map[uint32]bool, 2*n)
				for j, r := range dst.raw {
					seen[r], used[dst.Indices[j]] = true, true
				}
			}
			dup, coll = seen[idx], used[b]
			seen[idx], used[b] = true, true
		}
		if dup {
			dst.Duplicates++
			continue
		}
		if coll {
			dst.Collisions++
		}
		if val != 1 {
			dst.NonBinary++
		}
		dst.Indices = append(dst.Indices, b)
		dst.raw = append(dst.raw, idx)
	}
}

// parseClass parses a class label: decimal digits, optionally followed by
// ".0", of a value below classes.
func parseClass(tok []byte, classes int) (uint8, bool) {
	tok = bytes.TrimSuffix(tok, []byte(".0"))
	if len(tok) == 0 || len(tok) > 3 {
		return 0, false
	}
	v := 0
	for _, ch := range tok {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		v = v*10 + int(ch-'0')
	}
	if v >= classes {
		return 0, false
	}
	return uint8(v), true
}

func nextToken(b []byte) (tok, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
