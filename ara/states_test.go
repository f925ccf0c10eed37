package ara

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The seven figures of issue 38 (from WICG/attribution-reporting-api's
// flexible_event_privacy.py and its issue #734), at Chromium's ε = 14, to
// the digits given: the default navigation source has 2,925 states,
// p = 0.24263% and 11.46 bits; the default event source 3 states and
// p ≈ 2.49×10⁻⁶; issue #734's "((8+3) choose 3) = 165" states, 8
// trigger-data values and 3 reports in 1 window, give 0.01372%, and its
// 969 = C(8·2+3, 3) states, 2 windows, 0.08051%.
func TestIssueFigures(t *testing.T) {
	cases := []struct {
		name        string
		config      Config
		source      Source
		states      int64
		flipPercent string // 100·p, %.5f
		flipSci     string // p, %.2e (when given so)
		bits        string // %.2f (when given)
	}{
		{"navigation default", Default(Navigation), Navigation, 2925, "0.24263", "", "11.46"},
		{"event default", Default(Event), Event, 3, "", "2.49e-06", ""},
		{"issue 734, 1 window", Uniform(8, 1, 3), Navigation, 165, "0.01372", "", ""},
		{"issue 734, 2 windows", Uniform(8, 2, 3), Navigation, 969, "0.08051", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Evaluate(tc.config, tc.source, 14)
			if err != nil {
				t.Fatal(err)
			}
			if r.States.Cmp(big.NewInt(tc.states)) != 0 {
				t.Errorf("states %v, want %d", r.States, tc.states)
			}
			if got := fmt.Sprintf("%.5f", 100*r.FlipProbability); tc.flipPercent != "" && got != tc.flipPercent {
				t.Errorf("flip probability %s%%, want %s%%", got, tc.flipPercent)
			}
			if got := fmt.Sprintf("%.2e", r.FlipProbability); tc.flipSci != "" && got != tc.flipSci {
				t.Errorf("flip probability %s, want %s", got, tc.flipSci)
			}
			if got := fmt.Sprintf("%.2f", r.InformationGainBits); tc.bits != "" && got != tc.bits {
				t.Errorf("information gain %s bits, want %s", got, tc.bits)
			}
			if ex := Chromium.Exceeded(tc.config, r); len(ex) > 0 {
				t.Errorf("Chromium's own configuration exceeds its limits: %v", ex)
			}
		})
	}
}

// bruteStates counts c's output states by enumeration: every ordered
// sequence of at most MaxReports reports over the (value, window) cells,
// sorted into a multiset, kept when no value has more reports than its
// spec's cap; k is the number of distinct multisets.
func bruteStates(c Config) int {
	type cell struct{ value, window int }
	var cells []cell
	var caps []int
	for _, s := range c.Specs {
		for range s.TriggerData {
			v := len(caps)
			caps = append(caps, s.Reports)
			for w := range s.Windows {
				cells = append(cells, cell{v, w})
			}
		}
	}
	seen := map[string]bool{}
	var walk func(seq []int)
	walk = func(seq []int) {
		per := make([]int, len(caps))
		for _, i := range seq {
			per[cells[i].value]++
		}
		for v, n := range per {
			if n > caps[v] {
				return
			}
		}
		key := slices.Clone(seq)
		slices.Sort(key)
		seen[fmt.Sprint(key)] = true
		if len(seq) == c.MaxReports {
			return
		}
		for i := range cells {
			walk(append(seq, i))
		}
	}
	walk(nil)
	return len(seen)
}

// States equals enumeration on small configurations, uniform and
// flexible, caps binding or not (and so do both of its algorithms where
// both apply).
func TestStatesBruteForce(t *testing.T) {
	cases := []struct {
		name string
		c    Config
		want int64 // 0: brute force only
	}{
		{"one value, one window, one report", Uniform(1, 1, 1), 2},
		{"event default", Uniform(2, 1, 1), 3},
		{"2 values × 2 windows, 2 reports", Uniform(2, 2, 2), 15},
		{"3 values × 2 windows, 3 reports", Uniform(3, 2, 3), 84},
		{"1 value × 3 windows, 4 reports", Uniform(1, 3, 4), 35},
		{"no trigger data", Config{MaxReports: 3}, 1},
		{"no reports", Uniform(3, 2, 0), 1},
		{"a value that never reports", Config{MaxReports: 2, Specs: []TriggerSpec{{1, 2, 0}, {1, 1, 2}}}, 3},
		{"caps bind: 3 values of one report each", Config{MaxReports: 4, Specs: []TriggerSpec{{3, 1, 1}}}, 8},
		{"caps bind across windows", Config{MaxReports: 3, Specs: []TriggerSpec{{2, 2, 1}, {1, 3, 2}}}, 0},
		{"cap above the total", Config{MaxReports: 2, Specs: []TriggerSpec{{1, 2, 5}}}, 6},
		{"three groups", Config{MaxReports: 3, Specs: []TriggerSpec{{1, 1, 3}, {1, 2, 1}, {2, 1, 2}}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := int64(bruteStates(tc.c))
			if tc.want != 0 && want != tc.want {
				t.Fatalf("enumeration %d, by hand %d", want, tc.want)
			}
			if got := tc.c.States(); got.Cmp(big.NewInt(want)) != 0 {
				t.Errorf("States %v, enumeration %d", got, want)
			}
			if got := tc.c.statesProduct(); got.Cmp(big.NewInt(want)) != 0 {
				t.Errorf("the product %v, enumeration %d", got, want)
			}
		})
	}
	// Random small configurations (seeded).
	r := rand.New(rand.NewPCG(38, 734))
	for i := range 200 {
		c := Config{MaxReports: 1 + r.IntN(4)}
		for range 1 + r.IntN(3) {
			c.Specs = append(c.Specs, TriggerSpec{TriggerData: 1 + r.IntN(2), Windows: 1 + r.IntN(2), Reports: 1 + r.IntN(4)})
		}
		if want := bruteStates(c); c.States().Cmp(big.NewInt(int64(want))) != 0 {
			t.Fatalf("config %d %+v: States %v, enumeration %d", i, c, c.States(), want)
		}
	}
}

// The closed form and the generating function agree on every uniform
// configuration of a grid (Σ_{j ≤ R} C(j+n−1, j) = C(n+R, R)), and at
// sizes far from enumeration.
func TestStarsAndBarsIsTheProduct(t *testing.T) {
	for tv := 1; tv <= 6; tv++ {
		for w := 1; w <= 5; w++ {
			for r := 1; r <= 7; r++ {
				c := Uniform(tv, w, r)
				if a, b := c.States(), c.statesProduct(); a.Cmp(b) != 0 {
					t.Fatalf("T=%d W=%d R=%d: closed form %v, product %v", tv, w, r, a, b)
				}
			}
		}
	}
	for _, c := range []Config{Uniform(32, 5, 20), Uniform(1000, 7, 13), Uniform(MaxTriggerData, MaxWindows, MaxReports),
		{MaxReports: 13, Specs: slices.Repeat([]TriggerSpec{{1, 7, 13}}, 1000)}} { // one group's values as 1,000 specs
		if a, b := c.States(), c.statesProduct(); a.Cmp(b) != 0 {
			t.Fatalf("%v: closed form %v, product %v", c, a, b)
		}
	}
}

// Known values: C(n+R, R) by its definition for a few (n, R).
func TestStarsAndBars(t *testing.T) {
	cases := []struct {
		n    int64
		r    int
		want string
	}{
		{0, 0, "1"}, {0, 5, "1"}, {5, 0, "1"}, {24, 3, "2925"}, {8, 3, "165"}, {16, 3, "969"}, {2, 1, "3"},
		{160, 20, "175142105857592248012292655"}, // C(180, 20), Python's math.comb
	}
	for _, tc := range cases {
		if got := StarsAndBars(tc.n, tc.r).String(); got != tc.want {
			t.Errorf("StarsAndBars(%d, %d) = %s, want %s", tc.n, tc.r, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		c     Config
		param string // "" valid
	}{
		{"default", Default(Navigation), ""},
		{"no trigger data", Config{MaxReports: 1}, ""},
		{"zero reports", Uniform(8, 3, 0), ""},
		{"negative reports", Uniform(8, 3, -1), "reports"},
		{"too many reports", Uniform(8, 3, MaxReports+1), "reports"},
		{"zero trigger data", Uniform(0, 3, 3), "trigger_data"},
		{"zero windows", Uniform(8, 0, 3), "windows"},
		{"too many windows", Uniform(8, MaxWindows+1, 3), "windows"},
		{"too many values", Uniform(MaxTriggerData+1, 1, 1), "trigger_data"},
		{"a flexible group's windows", Config{MaxReports: 3, Specs: []TriggerSpec{{1, 1, 1}, {1, 0, 1}}}, "trigger_specs[1].windows"},
		{"flexible max reports", Config{MaxReports: -1, Specs: []TriggerSpec{{1, 1, 1}, {1, 1, 1}}}, "max_event_level_reports"},
		{"values summing above the bound", Config{MaxReports: 1, Specs: []TriggerSpec{{MaxTriggerData, 1, 1}, {1, 1, 1}}}, "trigger_specs[1].trigger_data"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if tc.param == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			pe, ok := err.(*ParamError)
			if !ok || pe.Param != tc.param || strings.Contains(pe.Msg, "\n") {
				t.Fatalf("error %v, want a *ParamError naming %s", err, tc.param)
			}
		})
	}
}

// A registration of many specs costs what its distinct shapes cost: 50,000
// one-value specs of 20 shapes at R = 100 (a 1 MiB registration's worth)
// give the product of their groups.
func TestStatesManySpecs(t *testing.T) {
	c := Config{MaxReports: MaxReports}
	want := Config{MaxReports: MaxReports}
	for i := range 50000 {
		c.Specs = append(c.Specs, TriggerSpec{TriggerData: 1, Windows: 1 + i%5, Reports: 1 + i%4})
	}
	for i := range 20 {
		want.Specs = append(want.Specs, TriggerSpec{TriggerData: 2500, Windows: 1 + i%5, Reports: 1 + i%4})
	}
	if a, b := c.States(), want.States(); a.Cmp(b) != 0 {
		t.Fatalf("50,000 specs: %v states, grouped %v", a, b)
	}
}
