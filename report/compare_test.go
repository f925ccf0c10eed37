package report

import (
	"math"
	"testing"

	"labelprivacy/data"
)

type sumRow struct {
	setting, pet string
	k            int64
	eps          float64
	auc, aucSE   float64
	eadv, eadvSE float64
}

// summaryTable builds a summary with the columns Compare reads plus the
// rest of SummaryColumns.
func summaryTable(rows ...sumRow) *data.Table {
	n := len(rows)
	setting, pet := make([]string, n), make([]string, n)
	k, nt := make([]int64, n), make([]int64, n)
	f := func() []float64 { return make([]float64, n) }
	eps, ldp, lr, auc, se, eadv, eadvSE, p98, inf := f(), f(), f(), f(), f(), f(), f(), f(), f()
	for i, r := range rows {
		setting[i], pet[i], k[i], eps[i], auc[i], se[i], eadv[i], eadvSE[i] = r.setting, r.pet, r.k, r.eps, r.auc, r.aucSE, r.eadv, r.eadvSE
		ldp[i], lr[i], nt[i], p98[i], inf[i] = r.eps, 1e-3, 3, r.eps, 0
	}
	return &data.Table{Columns: []data.Column{
		{Name: "setting", Values: setting}, {Name: "pet", Values: pet}, {Name: "k", Values: k},
		{Name: "epsilon", Values: eps}, {Name: "label_dp_epsilon", Values: ldp}, {Name: "best_lr", Values: lr},
		{Name: "auc_mean", Values: auc}, {Name: "auc_se", Values: se}, {Name: "n_trials", Values: nt},
		{Name: "eadv", Values: eadv}, {Name: "eadv_se", Values: eadvSE}, {Name: "ma_p98", Values: p98},
		{Name: "ma_inf_frac", Values: inf},
	}}
}

func TestCompare(t *testing.T) {
	nan := math.NaN()
	type want struct {
		dAUC, dAUCse, dE, dEse float64
		sig                    bool
		onlyIn                 string
	}
	cases := []struct {
		name string
		a, b sumRow
		bOK  bool // b side present (else only a)
		aOK  bool
		want want
	}{
		{"AUC shift beyond 2 SE",
			sumRow{"rr_eps1", "rr", 0, 1, 0.70, 0.003, 0.05, 0.001}, sumRow{"rr_eps1", "rr", 0, 1, 0.72, 0.004, 0.05, 0.001}, true, true,
			want{0.02, 0.005, 0, math.Sqrt2 * 0.001, true, ""}},
		{"AUC shift within 2 SE",
			sumRow{"rr_eps1", "rr", 0, 1, 0.70, 0.003, 0.05, 0.001}, sumRow{"rr_eps1", "rr", 0, 1, 0.705, 0.004, 0.05, 0.001}, true, true,
			want{0.005, 0.005, 0, math.Sqrt2 * 0.001, false, ""}},
		{"eadv shift alone is significant",
			sumRow{"llp_k8", "llp", 8, 0, 0.66, 0.01, 0.050, 0.001}, sumRow{"llp_k8", "llp", 8, 0, 0.66, 0.01, 0.053, 0.001}, true, true,
			want{0, math.Sqrt2 * 0.01, 0.003, math.Sqrt2 * 0.001, true, ""}},
		{"SE 0: any difference is significant",
			sumRow{"bot", "bot", 0, 0, 0.5, 0, 0, 0}, sumRow{"bot", "bot", 0, 0, 0.501, 0, 0, 0}, true, true,
			want{0.001, 0, 0, 0, true, ""}},
		{"missing audit: NaN eadv never significant",
			sumRow{"none", "none", 0, 0, 0.8, 0.01, nan, nan}, sumRow{"none", "none", 0, 0, 0.8, 0.01, nan, nan}, true, true,
			want{0, math.Sqrt2 * 0.01, nan, nan, false, ""}},
		{"only in a",
			sumRow{"rr_eps2", "rr", 0, 2, 0.7, 0.01, 0.01, 0}, sumRow{}, false, true,
			want{nan, nan, nan, nan, false, "a"}},
		{"only in b",
			sumRow{}, sumRow{"llp_geom_k8_eps1", "llp_geom", 8, 1, 0.7, 0.01, 0.01, 0}, true, false,
			want{nan, nan, nan, nan, false, "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ra, rb []sumRow
			if tc.aOK {
				ra = append(ra, tc.a)
			}
			if tc.bOK {
				rb = append(rb, tc.b)
			}
			// An unrelated shared setting on both sides checks row matching.
			other := sumRow{"llp_k512", "llp", 512, 0, 0.6, 0.01, 0.001, 0.0001}
			ra, rb = append(ra, other), append(rb, other)
			c, err := Compare(summaryTable(ra...), summaryTable(rb...))
			if err != nil {
				t.Fatal(err)
			}
			if c.Rows() != 2 {
				t.Fatalf("%d rows, want 2", c.Rows())
			}
			setting := tc.a.setting
			if !tc.aOK {
				setting = tc.b.setting
			}
			r := summaryRow(t, c, setting)
			got := want{r["d_auc"].(float64), r["d_auc_se"].(float64), r["d_eadv"].(float64), r["d_eadv_se"].(float64), r["significant"].(bool), r["only_in"].(string)}
			approx := func(x, y float64) bool { return sameFloat(x, y) || math.Abs(x-y) < 1e-9 }
			if !approx(got.dAUC, tc.want.dAUC) || !approx(got.dAUCse, tc.want.dAUCse) || !approx(got.dE, tc.want.dE) ||
				!approx(got.dEse, tc.want.dEse) || got.sig != tc.want.sig || got.onlyIn != tc.want.onlyIn {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if tc.aOK && !tc.bOK && (r["auc_a"].(float64) != tc.a.auc || !math.IsNaN(r["auc_b"].(float64))) {
				t.Fatalf("only-in-a row: auc_a %v auc_b %v", r["auc_a"], r["auc_b"])
			}
			o := summaryRow(t, c, "llp_k512")
			if o["d_auc"].(float64) != 0 || o["significant"].(bool) || o["only_in"].(string) != "" {
				t.Fatalf("shared row %v", o)
			}
		})
	}
}

func TestCompareErrors(t *testing.T) {
	ok := summaryTable(sumRow{"rr_eps1", "rr", 0, 1, 0.7, 0.01, 0.01, 0})
	dup := summaryTable(sumRow{"rr_eps1", "rr", 0, 1, 0.7, 0.01, 0.01, 0}, sumRow{"rr_eps1", "rr", 0, 1, 0.7, 0.01, 0.01, 0})
	missing := summaryTable(sumRow{"rr_eps1", "rr", 0, 1, 0.7, 0.01, 0.01, 0})
	missing.Columns = missing.Columns[:5]
	cases := []struct {
		name string
		a, b *data.Table
	}{
		{"nil", nil, ok},
		{"setting twice", ok, dup},
		{"missing column", missing, ok},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Compare(tc.a, tc.b); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
