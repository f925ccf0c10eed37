package report

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"labelprivacy/internal/testutil"
)

// readmeLists returns README's column lists: every inline code span that
// is a comma-separated list of two or more snake_case names, with the
// table file its paragraph or bullet names last before it ("runs" for
// `runs.csv` or `runs.parquet`; "" when none does) and the heading it is
// under. Code spans may wrap across lines.
func readmeLists(t testing.TB, readme string) []readmeList {
	t.Helper()
	fileRE := regexp.MustCompile("`([a-z_]+)\\.(?:csv|parquet)`")
	listRE := regexp.MustCompile("`([a-z0-9_]+(?:, [a-z0-9_]+)+)`")
	var out []readmeList
	heading := ""
	var unit []string
	flush := func() {
		text := strings.Join(strings.Fields(strings.Join(unit, " ")), " ")
		unit = nil
		files := fileRE.FindAllStringSubmatchIndex(text, -1)
		for _, m := range listRE.FindAllStringSubmatchIndex(text, -1) {
			l := readmeList{heading: heading, names: strings.Split(text[m[2]:m[3]], ", ")}
			for _, f := range files {
				if f[1] <= m[0] {
					l.table = text[f[2]:f[3]]
				}
			}
			out = append(out, l)
		}
	}
	for _, line := range strings.Split(readme, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "#"):
			flush()
			heading = strings.TrimSpace(strings.TrimLeft(trim, "#"))
			continue
		case trim == "", strings.HasPrefix(trim, "- "), strings.HasPrefix(trim, "|"):
			flush()
		}
		unit = append(unit, line)
	}
	flush()
	return out
}

type readmeList struct {
	heading, table string
	names          []string
}

// README's column lists match the schemas the tables are written and read
// with: each table's full list equals its schema's columns in order, and a
// shorter list (e.g. compare.csv's per-side columns) is a run of
// consecutive columns of its table. Every list must name its table (the
// privacy ledger's, in its own section, is checked by package pets).
func TestREADMEColumns(t *testing.T) {
	checkREADMEColumns(t, testutil.UserDocs(t, ".."))
}

func checkREADMEColumns(t testing.TB, readme string) {
	t.Helper()
	schemas := map[string][]string{
		"runs": runSchema.names(), "audit": auditSchema.names(), "posteriors": posteriorSchema.names(),
		"calibration": calibrationSchema.names(), "summary": summarySchema.names(), "compare": comparisonSchema.names(),
		"learning_curves": curveSchema.names(), "model_attack": modelAttackSchema.names(),
	}
	full := map[string]bool{}
	for _, l := range readmeLists(t, readme) {
		if l.table == "" && l.heading == "The privacy ledger" {
			continue
		}
		cols, ok := schemas[l.table]
		if !ok {
			t.Errorf("README (%s): list %q names no table of package report (a `NAME.csv` before it in its paragraph)", l.heading, l.names)
			continue
		}
		if slices.Equal(l.names, cols) {
			full[l.table] = true
			continue
		}
		i := slices.Index(cols, l.names[0])
		if i < 0 || len(cols)-i < len(l.names) || !slices.Equal(cols[i:i+len(l.names)], l.names) {
			t.Errorf("README (%s): %s columns %q are not the table's (%q)", l.heading, l.table, l.names, cols)
		}
	}
	for name := range schemas {
		if !full[name] {
			t.Errorf("README lists no full column list of %s (want %q)", name, schemas[name])
		}
	}
}

// The check fails on a README whose lists drift from the schemas.
func TestREADMEColumnsDrift(t *testing.T) {
	good := testutil.UserDocs(t, "..")
	for _, tc := range []struct{ name, from, to string }{
		{"runs column renamed", "replicas, matmul, bags, config_name, config, classes", "replicas, matmul, bag_rule, config_name, config, classes"},
		{"audit columns swapped", "eadv_trial_min, eadv_trial_max, config_id", "eadv_trial_max, eadv_trial_min, config_id"},
		{"summary column dropped", "ma_p90, ma_mean, config_name", "ma_mean, config_name"},
		{"compare run not consecutive", "`dataset_a, config_id_a, dataset_b, config_id_b`", "`dataset_a, dataset_b`"},
		{"list without its table", "`calibration.csv`, one row", "the calibration table, one row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.from) {
				t.Fatalf("README no longer holds %q: update this test", tc.from)
			}
			ft := &fakeT{}
			checkREADMEColumns(ft, strings.Replace(good, tc.from, tc.to, 1))
			if !ft.failed {
				t.Error("not caught")
			}
		})
	}
}

// fakeT records whether a check failed.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatal(...any)          { f.failed = true }
