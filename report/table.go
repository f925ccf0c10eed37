package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"labelprivacy/data"
)

// ErrNoData is returned (wrapped) by the plotting functions when their input
// has nothing to draw: an empty or nil table, or no row with the needed
// values. Nothing is written in that case. WritePlots skips such figures.
var ErrNoData = errors.New("report: no data to plot")

// Concat unions tables by column name: the result has every column that
// appears in any table, in order of first appearance, and the rows of each
// table in turn. A column missing from a table is filled with NaN (float64),
// "" (string), 0 (int64) or false (bool). A column whose type differs
// between tables is an error wrapping data.ErrSchema. Nil tables are
// skipped; Meta is merged, the first table's value winning on a key clash.
// Concat of no tables is an empty table (no columns).
func Concat(tables ...*data.Table) (*data.Table, error) {
	type colInfo struct {
		name string
		typ  string
	}
	var cols []colInfo
	index := map[string]int{}
	out := &data.Table{}
	for ti, t := range tables {
		if t == nil {
			continue
		}
		if err := checkTable(t); err != nil {
			return nil, fmt.Errorf("report: Concat: table %d: %w", ti, err)
		}
		for k, v := range t.Meta {
			if out.Meta == nil {
				out.Meta = map[string]string{}
			}
			if _, ok := out.Meta[k]; !ok {
				out.Meta[k] = v
			}
		}
		for _, c := range t.Columns {
			typ := fmt.Sprintf("%T", c.Values)
			if j, ok := index[c.Name]; ok {
				if cols[j].typ != typ {
					return nil, fmt.Errorf("%w: report: Concat: column %q is %s in table %d but %s earlier",
						data.ErrSchema, c.Name, typ, ti, cols[j].typ)
				}
				continue
			}
			index[c.Name] = len(cols)
			cols = append(cols, colInfo{c.Name, typ})
		}
	}
	out.Columns = make([]data.Column, len(cols))
	for j, ci := range cols {
		var vals any
		for _, t := range tables {
			if t == nil {
				continue
			}
			n := t.Rows()
			src, ok := lookup(t, ci.name)
			switch ci.typ {
			case "[]string":
				v, _ := vals.([]string)
				if ok {
					v = append(v, src.([]string)...)
				} else {
					v = append(v, make([]string, n)...)
				}
				vals = v
			case "[]float64":
				v, _ := vals.([]float64)
				if ok {
					v = append(v, src.([]float64)...)
				} else {
					for range n {
						v = append(v, math.NaN())
					}
				}
				vals = v
			case "[]int64":
				v, _ := vals.([]int64)
				if ok {
					v = append(v, src.([]int64)...)
				} else {
					v = append(v, make([]int64, n)...)
				}
				vals = v
			case "[]bool":
				v, _ := vals.([]bool)
				if ok {
					v = append(v, src.([]bool)...)
				} else {
					v = append(v, make([]bool, n)...)
				}
				vals = v
			}
		}
		if vals == nil { // all contributing tables empty: keep the type
			switch ci.typ {
			case "[]string":
				vals = []string{}
			case "[]float64":
				vals = []float64{}
			case "[]int64":
				vals = []int64{}
			case "[]bool":
				vals = []bool{}
			}
		}
		out.Columns[j] = data.Column{Name: ci.name, Values: vals}
	}
	return out, nil
}

// checkTable validates column types and lengths.
func checkTable(t *data.Table) error {
	n := -1
	seen := map[string]bool{}
	for _, c := range t.Columns {
		if seen[c.Name] {
			return fmt.Errorf("%w: duplicate column %q", data.ErrSchema, c.Name)
		}
		seen[c.Name] = true
		var m int
		switch v := c.Values.(type) {
		case []string:
			m = len(v)
		case []float64:
			m = len(v)
		case []int64:
			m = len(v)
		case []bool:
			m = len(v)
		default:
			return fmt.Errorf("%w: column %q has unsupported type %T", data.ErrSchema, c.Name, c.Values)
		}
		if n >= 0 && m != n {
			return fmt.Errorf("%w: column %q has %d rows, want %d", data.ErrSchema, c.Name, m, n)
		}
		n = m
	}
	return nil
}

func lookup(t *data.Table, name string) (any, bool) {
	if t == nil {
		return nil, false
	}
	for _, c := range t.Columns {
		if c.Name == name {
			return c.Values, true
		}
	}
	return nil, false
}

// cols reads typed columns of one table, remembering the first error.
type cols struct {
	t    *data.Table
	what string // "runs", "audit", ...
	err  error
}

func (c *cols) get(name string) any {
	if c.err != nil {
		return nil
	}
	v, ok := lookup(c.t, name)
	if !ok {
		c.err = fmt.Errorf("%w: report: %s table has no column %q", data.ErrSchema, c.what, name)
	}
	return v
}

func (c *cols) str(name string) []string {
	v := c.get(name)
	if c.err != nil {
		return nil
	}
	s, ok := v.([]string)
	if !ok {
		c.err = fmt.Errorf("%w: report: %s column %q is %T, want []string", data.ErrSchema, c.what, name, v)
	}
	return s
}

func (c *cols) f64(name string) []float64 {
	v := c.get(name)
	if c.err != nil {
		return nil
	}
	s, ok := v.([]float64)
	if !ok {
		c.err = fmt.Errorf("%w: report: %s column %q is %T, want []float64", data.ErrSchema, c.what, name, v)
	}
	return s
}

func (c *cols) i64(name string) []int64 {
	v := c.get(name)
	if c.err != nil {
		return nil
	}
	s, ok := v.([]int64)
	if !ok {
		c.err = fmt.Errorf("%w: report: %s column %q is %T, want []int64", data.ErrSchema, c.what, name, v)
	}
	return s
}

// PetOrder is the canonical order of mechanisms in tables and legends
// (paper Section 4). Unknown mechanisms sort after these, alphabetically.
var PetOrder = []string{"none", "bot", "rr", "llp", "llp_lap", "llp_geom"}

func petRank(pet string) int {
	if i := slices.Index(PetOrder, pet); i >= 0 {
		return i
	}
	return len(PetOrder)
}

// settingKey orders settings: pet (PetOrder), then k, then ε, then the
// setting and pet names as tie-breaks, so output never depends on input
// order.
type settingKey struct {
	setting, pet string
	k            int64
	eps          float64
}

func compareKeys(a, b settingKey) int {
	return cmp.Or(
		cmp.Compare(petRank(a.pet), petRank(b.pet)),
		cmp.Compare(a.pet, b.pet),
		cmp.Compare(a.k, b.k),
		cmp.Compare(a.eps, b.eps),
		cmp.Compare(a.setting, b.setting),
	)
}

// sameFloat is == that treats NaN as equal to NaN.
func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}
