package report

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"labelprivacy/pets"
)

// srow is a summary row with the fields Compare reads.
const dsA, dsB, cfgA = "sha256:aaaaaaaaaaaaaaaa", "sha256:bbbbbbbbbbbbbbbb", "cfg-a"

func near(a, b float64) bool {
	return sameFloat(a, b) || math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b))
}

func srow(setting string, pet pets.Kind, k int, eps, auc, aucSE, eadv, eadvSE float64) Row {
	return Row{Dataset: dsA, ConfigID: cfgA, Setting: setting, Pet: pet, K: k, Epsilon: eps, AUCMean: auc, AUCSE: aucSE,
		NTrials: 3, EAdv: eadv, EAdvSE: eadvSE, Audited: !math.IsNaN(eadv)}
}

func summaryOf(rows ...Row) *Summary { return &Summary{Rows: rows} }

func TestCompare(t *testing.T) {
	nan := math.NaN()
	type want struct {
		dAUC, dAUCse, dE, dEse float64
		sigAUC, sigEAdv        bool
		onlyIn                 Side
	}
	rrRow := func(auc, aucSE, eadv, eadvSE float64) *Row {
		r := srow("rr_eps1", pets.RR, 0, 1, auc, aucSE, eadv, eadvSE)
		return &r
	}
	other := srow("llp_k512", pets.LLP, 512, 0, 0.6, 0.01, 0.001, 0.0001)
	cases := []struct {
		name string
		a, b *Row // nil: absent on that side
		want want
	}{
		{"AUC shift beyond 2 SE", rrRow(0.70, 0.003, 0.05, 0.001), rrRow(0.72, 0.004, 0.05, 0.001),
			want{0.02, 0.005, 0, math.Sqrt2 * 0.001, true, false, InBoth}},
		{"AUC shift within 2 SE", rrRow(0.70, 0.003, 0.05, 0.001), rrRow(0.705, 0.004, 0.05, 0.001),
			want{0.005, 0.005, 0, math.Sqrt2 * 0.001, false, false, InBoth}},
		// 1.9 and 2.1 SE: the 2-SE threshold is checked to within 5%.
		{"AUC shift of 1.9 SE", rrRow(0.70, 0.003, 0.05, 0.001), rrRow(0.7095, 0.004, 0.05, 0.001),
			want{0.0095, 0.005, 0, math.Sqrt2 * 0.001, false, false, InBoth}},
		{"AUC shift of 2.1 SE", rrRow(0.70, 0.003, 0.05, 0.001), rrRow(0.7105, 0.004, 0.05, 0.001),
			want{0.0105, 0.005, 0, math.Sqrt2 * 0.001, true, false, InBoth}},
		// The line: ΔAUC +0.010 ± 0.019 beside a significant
		// ΔE[adv] is not a significant ΔAUC.
		{"eadv shift alone is significant, the AUC one not", rrRow(0.66, 0.0134, 0.050, 0.001), rrRow(0.67, 0.0134, 0.053, 0.001),
			want{0.01, math.Sqrt2 * 0.0134, 0.003, math.Sqrt2 * 0.001, false, true, InBoth}},
		{"both beyond 2 SE", rrRow(0.66, 0.003, 0.050, 0.001), rrRow(0.68, 0.003, 0.053, 0.001),
			want{0.02, math.Sqrt2 * 0.003, 0.003, math.Sqrt2 * 0.001, true, true, InBoth}},
		{"SE 0 (exact audit): any difference is significant", rrRow(0.5, 0.01, 0.05, 0), rrRow(0.5, 0.01, 0.0501, 0),
			want{0, math.Sqrt2 * 0.01, 0.0001, 0, false, true, InBoth}},
		{"single trials and no audit (SE NaN): never significant", rrRow(0.70, nan, nan, nan), rrRow(0.75, nan, nan, nan),
			want{0.05, nan, nan, nan, false, false, InBoth}},
		{"only in a", rrRow(0.70, 0.01, 0.01, 0), nil, want{nan, nan, nan, nan, false, false, OnlyInA}},
		{"only in b", nil, rrRow(0.70, 0.01, 0.01, 0), want{nan, nan, nan, nan, false, false, OnlyInB}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ra, rb []Row
			if tc.a != nil {
				ra = append(ra, *tc.a)
			}
			if tc.b != nil {
				rb = append(rb, *tc.b)
			}
			// An unrelated shared setting on both sides checks row matching.
			cs, err := Compare(summaryOf(append(ra, other)...), summaryOf(append(rb, other)...), CompareOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 2 || cs[0].Setting != "rr_eps1" || cs[1].Setting != "llp_k512" {
				t.Fatalf("rows %+v, want rr_eps1 then llp_k512", cs)
			}
			c := cs[0]
			got := want{c.DAUC, c.DAUCSE, c.DEAdv, c.DEAdvSE, c.SignificantMetric, c.SignificantEAdv, c.OnlyIn}
			approx := func(x, y float64) bool { return sameFloat(x, y) || math.Abs(x-y) < 1e-9 }
			if !approx(got.dAUC, tc.want.dAUC) || !approx(got.dAUCse, tc.want.dAUCse) || !approx(got.dE, tc.want.dE) ||
				!approx(got.dEse, tc.want.dEse) || got.sigAUC != tc.want.sigAUC || got.sigEAdv != tc.want.sigEAdv || got.onlyIn != tc.want.onlyIn {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if tc.b == nil && (c.AUCA != tc.a.AUCMean || !math.IsNaN(c.AUCB)) {
				t.Fatalf("only-in-a row: auc_a %v auc_b %v", c.AUCA, c.AUCB)
			}
			if tc.a == nil && (c.AUCB != tc.b.AUCMean || !math.IsNaN(c.AUCA)) {
				t.Fatalf("only-in-b row: auc_a %v auc_b %v", c.AUCA, c.AUCB)
			}
			if o := cs[1]; o.DAUC != 0 || o.Significant() || o.OnlyIn != InBoth {
				t.Fatalf("shared row %+v", o)
			}
		})
	}
}

// Summaries of different datasets or configs are compared only when
// allowed (before, a ΔAUC across datasets came with no warning and empty
// dataset and config columns). Allowed, two single-group summaries match by
// setting across configs, each row naming both sides' dataset and config;
// mixed summaries match within (dataset, config).
func TestCompareGroups(t *testing.T) {
	a := srow("rr_eps1", pets.RR, 0, 1, 0.70, 0.003, 0.05, 0.001)
	b := a
	b.ConfigID, b.AUCMean = "cfg-standardized", 0.74
	otherData := a
	otherData.Dataset = dsB
	for _, other := range []Row{b, otherData} {
		if _, err := Compare(summaryOf(a), summaryOf(other), CompareOptions{}); !errors.Is(err, ErrMixed) ||
			!strings.Contains(err.Error(), "config "+other.ConfigID) || !strings.Contains(err.Error(), "dataset "+other.Dataset) {
			t.Fatalf("a vs %s/%s: err = %v, want ErrMixed naming b's dataset and config", other.Dataset, other.ConfigID, err)
		}
	}
	cs, err := Compare(summaryOf(a), summaryOf(b), CompareOptions{AllowMixed: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].OnlyIn != InBoth || !near(cs[0].DAUC, 0.04) || cs[0].Dataset != "" || cs[0].ConfigID != "" ||
		cs[0].DatasetA != dsA || cs[0].ConfigIDA != cfgA || cs[0].DatasetB != dsA || cs[0].ConfigIDB != "cfg-standardized" {
		t.Fatalf("single groups: %+v", cs)
	}
	a2 := a
	a2.Dataset = dsB
	cs, err = Compare(summaryOf(a, a2), summaryOf(b, a2), CompareOptions{AllowMixed: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.Dataset+"/"+c.ConfigID+"/"+c.OnlyIn.String())
	}
	want := []string{dsA + "/cfg-a/a", dsA + "/cfg-standardized/b", dsB + "/cfg-a/"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mixed groups: %v, want %v", got, want)
	}
}

func TestCompareErrors(t *testing.T) {
	ok := summaryOf(srow("rr_eps1", pets.RR, 0, 1, 0.7, 0.01, 0.01, 0))
	dup := summaryOf(srow("rr_eps1", pets.RR, 0, 1, 0.7, 0.01, 0.01, 0), srow("rr_eps1", pets.RR, 0, 1, 0.7, 0.01, 0.01, 0))
	cases := []struct {
		name string
		a, b *Summary
	}{
		{"nil", nil, ok},
		{"setting twice", ok, dup},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Compare(tc.a, tc.b, CompareOptions{AllowMixed: true}); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestComparisonTable(t *testing.T) {
	cs := []Comparison{{Setting: "rr_eps1", Pet: pets.RR, Epsilon: 1, AUCA: 0.7, AUCB: math.NaN(), OnlyIn: OnlyInA, DatasetA: dsA, ConfigIDA: cfgA,
		Classes: 10, AccuracyA: 0.61, AccuracyB: math.NaN(), DAccuracy: math.NaN(), DAccuracySE: math.NaN()}}
	tab := roundTrip(t, ComparisonTable(cs))
	names := columnNames(tab)
	want := []string{"setting", "pet", "k", "epsilon", "auc_a", "auc_b", "d_auc", "d_auc_se", "eadv_a", "eadv_b",
		"d_eadv", "d_eadv_se", "significant_metric", "significant_eadv", "only_in", "dataset_a", "config_id_a", "dataset_b", "config_id_b",
		"tested", "config_name_a", "config_name_b", "config_diff", "classes", "accuracy_a", "accuracy_b", "d_accuracy", "d_accuracy_se"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("columns %v", names)
	}
	if v := tab.Columns[14].Values.([]string)[0]; v != "a" {
		t.Fatalf("only_in = %q", v)
	}
	back, err := comparisonSchema.fromTable(tab)
	if err != nil {
		t.Fatal(err)
	}
	if sprint(back) != sprint(cs) {
		t.Fatalf("round trip %+v, want %+v", back, cs)
	}
	tab.Columns[14].Values = []string{"c"}
	if _, err := comparisonSchema.fromTable(tab); err == nil {
		t.Fatal("only_in \"c\" read without error")
	}
}

// A comparison of two configs names what differs between them, by key, and
// so does a summary that keeps both (AllowMixed): the config's name and
// its values of the keys that differ, not only two hashes. Single trials
// without an audit are compared but not tested.
func TestCompareNamesConfigKeys(t *testing.T) {
	const base = "backend=go; model.kind=mlp; train.epochs=2; train.rr_loss="
	mk := func(cfg, name, loss string, trial int, auc float64) Run {
		return Run{RunID: cfg + fmt.Sprint(trial), Dataset: dsA, ConfigID: cfg, Setting: "rr_eps1", Pet: pets.RR, Epsilon: 1,
			LabelDPEpsilon: 1, LR: 1e-3, Trial: trial, TestAUC: auc, ConfigName: name, Config: base + loss}
	}
	a := []Run{mk("cfg:a", "acceptance-bce", "bce", 0, 0.70)}
	b := []Run{mk("cfg:b", "acceptance", "debiased_bce", 0, 0.72)}
	sa, err := Summarize(a, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Summarize(b, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Compare(sa, sb, CompareOptions{AllowMixed: true})
	if err != nil {
		t.Fatal(err)
	}
	c := rows[0]
	if c.ConfigDiff != "train.rr_loss: bce → debiased_bce" || c.ConfigNameA != "acceptance-bce" || c.ConfigNameB != "acceptance" {
		t.Fatalf("config diff %q, names %q, %q", c.ConfigDiff, c.ConfigNameA, c.ConfigNameB)
	}
	if c.Tested || c.Significant() {
		t.Fatalf("single trials without an audit: tested %v, significant %v", c.Tested, c.Significant())
	}
	if got := ComparedConfigDiffs(rows); len(got) != 1 || got[0] != c.ConfigDiff {
		t.Fatalf("ComparedConfigDiffs %q", got)
	}
	mixed, err := Summarize(append(a, b...), nil, Options{AllowMixed: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range mixed.Rows {
		want := map[string]string{"acceptance-bce": "train.rr_loss=bce", "acceptance": "train.rr_loss=debiased_bce"}[r.ConfigName]
		if want == "" || r.ConfigDiff != want || r.Config == "" {
			t.Fatalf("mixed summary row %q of config %q: diff %q", r.Setting, r.ConfigName, r.ConfigDiff)
		}
	}
	// One config: no diff.
	if sb.Rows[0].ConfigDiff != "" || sb.Rows[0].ConfigName != "acceptance" {
		t.Fatalf("one config: %+v", sb.Rows[0])
	}
	// report.md names the configs and the keys, in the summary and the
	// comparison.
	md := filepath.Join(t.TempDir(), "report.md")
	if err := WriteMarkdown(md, Markdown{Summary: mixed, Comparison: rows, CompareNames: [2]string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(md)
	for _, want := range []string{"`cfg:a` acceptance-bce (train.rr_loss=bce)", "`cfg:b` acceptance (train.rr_loss=debiased_bce)",
		"Config keys that differ (a → b): `train.rr_loss: bce → debiased_bce`", "| n/a |"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// Two trials a side: ΔAUC has a standard error and is tested.
	a2 := append(a, mk("cfg:a", "acceptance-bce", "bce", 1, 0.701))
	b2 := append(b, mk("cfg:b", "acceptance", "debiased_bce", 1, 0.721))
	sa2, _ := Summarize(a2, nil, Options{})
	sb2, _ := Summarize(b2, nil, Options{})
	rows2, err := Compare(sa2, sb2, CompareOptions{AllowMixed: true})
	if err != nil || !rows2[0].Tested || !rows2[0].SignificantMetric || rows2[0].TestedEAdv() || rows2[0].SignificantEAdv {
		t.Fatalf("two trials a side: %+v, %v", rows2[0], err)
	}
}

func TestConfigDiff(t *testing.T) {
	cases := []struct {
		a, b string
		want []string
	}{
		{"x=1; y=2", "x=1; y=2", nil},
		{"x=1; y=2", "x=1; y=3", []string{"y: 2 → 3"}},
		{"model.hidden=[64, 64]; x=1", "x=2", []string{"model.hidden: [64, 64] → (none)", "x: 1 → 2"}},
		{"", "x=1", nil},
	}
	for _, tc := range cases {
		if got := ConfigDiff(tc.a, tc.b); !slices.Equal(got, tc.want) {
			t.Errorf("ConfigDiff(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	m := map[string]string{"b": "[1, 2]", "a": "x"}
	if s := FormatConfig(m); s != "a=x; b=[1, 2]" || !maps.Equal(ParseConfig(s), m) {
		t.Fatalf("FormatConfig %q does not round-trip", s)
	}
}
