package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/data"
	"labelprivacy/internal/enum"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// Setting is one point of the PET grid as the config describes it: the
// mechanism's parameters, the LLP family's bag rule (random for the
// paper's bags) and rr_prior's stage fraction and prior learning rate
// (0 for other kinds; PriorLR 0: the middle of train.learning_rates). Two
// settings are the same exactly when they are equal (==).
type Setting struct {
	pets.Params
	Bags                   llp.Rule
	StageFraction, PriorLR float64
	// Prior is rr_bins's public prior: "uniform", "population", or the
	// weights of prior_weights as a JSON list (comparable, so that equal
	// settings are ==); "" for a private prior (Params.PriorEpsilon) and
	// the other kinds.
	Prior string
}

// Public priors of rr_bins by name (pets[i].prior).
const (
	PriorUniform    = "uniform"
	PriorPopulation = "population"
)

// PriorWeights returns the weights of a Prior holding a JSON list (nil for
// a named prior or none).
func (s Setting) PriorWeights() []float64 {
	if !strings.HasPrefix(s.Prior, "[") {
		return nil
	}
	var w []float64
	if err := json.Unmarshal([]byte(s.Prior), &w); err != nil {
		panic("config: a setting's prior weights do not parse: " + err.Error()) // written by Settings
	}
	return w
}

// priorSuffix names a public prior in a setting id: its name, or w and the
// first 8 hex digits of its list's SHA-256.
func priorSuffix(prior string) string {
	if !strings.HasPrefix(prior, "[") {
		return prior
	}
	h := sha256.Sum256([]byte(prior))
	return "w" + hex.EncodeToString(h[:4])
}

// DefaultStageFraction is rr_prior's share of training rows in stage 1
// when pets[i].stage_fraction is left out.
const DefaultStageFraction = 0.5

// ID names the setting in paths and tables: the kind, then _k<k> and
// _eps<ε> when set, ara_event's source (_t8_w3_r3), then the bag rule of
// curated bags and ara_summary's key (llp_k8_sorted-x3,
// llp_k8_key-campaign, ara_summary_eps8_key-campaign), ara_summary's
// budget split when the count's share is not all of it (_count0.5; a
// value share _value0.5, alone on values) and
// rr_prior's stage fraction and prior learning rate when not the defaults
// (rr_prior_eps1_s0.3_plr0.01).
func (s Setting) ID() string {
	id := s.Kind.String()
	if s.K > 0 {
		id += "_k" + strconv.Itoa(s.K)
	}
	if s.Epsilon > 0 {
		id += "_eps" + strconv.FormatFloat(s.Epsilon, 'g', -1, 64)
	}
	if s.Kind.Spec().Takes.Source {
		id += fmt.Sprintf("_t%d_w%d_r%d", s.TriggerData, s.Windows, s.Reports)
	}
	if suf := s.Bags.IDSuffix(); suf != "" {
		id += "_" + suf
	}
	if s.Kind.Spec().Takes.Shares {
		if s.CountShare != 1 && !(s.CountShare == 0 && s.ValueShare > 0) { // a value share alone: _value0.5
			id += "_count" + strconv.FormatFloat(s.CountShare, 'g', -1, 64)
		}
		if s.ValueShare != 0 {
			id += "_value" + strconv.FormatFloat(s.ValueShare, 'g', -1, 64)
		}
	}
	if s.Kind.Spec().Release.WithPrior() && s.StageFraction != DefaultStageFraction {
		id += "_s" + strconv.FormatFloat(s.StageFraction, 'g', -1, 64)
	}
	if s.PriorLR > 0 {
		id += "_plr" + strconv.FormatFloat(s.PriorLR, 'g', -1, 64)
	}
	if s.Prior != "" {
		id += "_" + priorSuffix(s.Prior)
	}
	if s.PriorEpsilon > 0 {
		id += "_pe" + strconv.FormatFloat(s.PriorEpsilon, 'g', -1, 64)
	}
	return id
}

// Settings expands one `pets:` entry into its settings, in the order k,
// epsilon, bags, reports, budget_share (an entry may list one twice:
// Validate refuses that). ara_summary's key is its bag rule key:<column>.
func (p PetConfig) Settings() []Setting {
	ks, eps, bags, reports, shares := p.K, p.Epsilon, p.Bags, p.Reports, p.BudgetShare
	if len(ks) == 0 {
		ks = []int{0}
	}
	if len(eps) == 0 {
		eps = []float64{0}
	}
	if len(bags) == 0 {
		bags = []llp.Rule{{}}
		if p.Key != "" {
			bags = []llp.Rule{{Kind: llp.RuleKey, Column: p.Key}}
		}
	}
	if len(reports) == 0 {
		reports = []int{0}
	}
	if len(shares) == 0 {
		shares = []BudgetShare{{}}
	}
	var out []Setting
	for _, k := range ks {
		for _, e := range eps {
			for _, b := range bags {
				for _, r := range reports {
					for _, sh := range shares {
						st := p.setting(k, e, b)
						if p.Mechanism.Spec().Takes.Source {
							st.TriggerData, st.Windows, st.Reports = p.TriggerData, p.Windows, r
						}
						st.CountShare, st.ValueShare = sh.Count, sh.Value
						out = append(out, st)
					}
				}
			}
		}
	}
	return out
}

// setting is the setting of k, ε and bag rule b of the entry, with
// rr_bins's prior and rr_prior's stage fraction and prior learning rate.
func (p PetConfig) setting(k int, e float64, b llp.Rule) Setting {
	st := Setting{Params: pets.Params{Kind: p.Mechanism, K: k, Epsilon: e}, Bags: b}
	if p.Mechanism.Spec().Takes.ValuePrior {
		if p.PriorEpsilon != nil {
			st.PriorEpsilon = *p.PriorEpsilon
		}
		st.Prior = p.Prior
		if p.PriorWeights != nil {
			w, _ := json.Marshal(p.PriorWeights) // finite: Validate
			st.Prior = string(w)
		}
	}
	if p.Mechanism.Spec().Release.WithPrior() {
		st.StageFraction = DefaultStageFraction
		if p.StageFraction != nil {
			st.StageFraction = *p.StageFraction
		}
		if p.PriorLR != nil {
			st.PriorLR = *p.PriorLR
		}
	}
	return st
}

// PriorTargets is how rr_prior's released labels become the per-row
// targets of plain BCE (train.rr_prior_targets). ỹ is the released label,
// π = 1/(1+e^ε). The debiased BCE ((1−π)ℓ(z,ỹ) − πℓ(z,1−ỹ))/(1−2π) is BCE
// with the float target (ỹ − π)/(1 − 2π), since BCE is linear in its
// target, so every choice trains with model.LossBCE:
//
//	argmax  debiased target on RR-branch rows (both stages), the released
//	        argmax label on argmax-branch rows
//	drop    debiased target on RR-branch rows; argmax rows are not trained on
//	prior   debiased target on RR-branch rows, the prior p on argmax rows
//	noisy   the released label ỹ on every row, not debiased (label-dp's
//	        recipe: plain cross-entropy on the noisy labels)
type PriorTargets string

// The choices of PriorTargets.
const (
	PriorTargetsArgmax PriorTargets = "argmax"
	PriorTargetsDrop   PriorTargets = "drop"
	PriorTargetsPrior  PriorTargets = "prior"
	PriorTargetsNoisy  PriorTargets = "noisy"
)

// defaultPriorTargets is train.rr_prior_targets' default: the best test
// AUC of the four on the logistic synthetic data (README, "RR with a
// prior").
const defaultPriorTargets = PriorTargetsArgmax

var priorTargets = enum.New("train.rr_prior_targets", nil, []string{"argmax", "drop", "prior", "noisy"},
	[]PriorTargets{PriorTargetsArgmax, PriorTargetsDrop, PriorTargetsPrior, PriorTargetsNoisy})

func (t PriorTargets) valid() bool { _, ok := priorTargets.Name(t); return ok }

func priorTargetNames() string { return priorTargets.Names() }

// UnmarshalText accepts argmax, drop, prior and noisy.
func (t *PriorTargets) UnmarshalText(b []byte) error { return priorTargets.Unmarshal(t, b) }

// checkCuratedPet validates pets[i]'s bags, stage_fraction and prior_lr,
// and, for a synthetic dataset, that the bag rules name existing columns.
func (c *Config) checkCuratedPet(i int, p PetConfig) error {
	key := fmt.Sprintf("pets[%d]", i)
	k := p.Mechanism
	prior := k.Spec().Release.WithPrior() // a two-stage release with a prior model
	switch {
	case len(p.Bags) > 0 && !k.IsLLP():
		return bad(key+".bags", "%s takes no bag rule (only llp, llp_lap, llp_geom do)", k)
	case p.StageFraction != nil && !prior:
		return bad(key+".stage_fraction", "%s takes no stage fraction (only rr_prior does)", k)
	case p.PriorLR != nil && !prior:
		return bad(key+".prior_lr", "%s takes no prior learning rate (only rr_prior does)", k)
	case p.StageFraction != nil && !(*p.StageFraction > 0 && *p.StageFraction < 1):
		return bad(key+".stage_fraction", "must be in (0, 1), got %v (leave the key out for the default %v)", *p.StageFraction, DefaultStageFraction)
	case p.PriorLR != nil && (!(*p.PriorLR > 0) || math.IsInf(*p.PriorLR, 0)):
		return bad(key+".prior_lr", "must be finite and > 0, got %v (leave the key out for the middle of train.learning_rates)", *p.PriorLR)
	}
	if err := checkBinsPrior(key, p); err != nil {
		return err
	}
	if c.Data.Path == "" {
		cols := columns{what: synthName, features: synthFeatures(c.Data.Synth.Features)}
		if c.Data.Synth.Groups > 0 {
			cols.keys = []string{data.SynthGroupColumn}
		}
		return cols.check(i, p)
	}
	return nil
}

// synthFeatures are the dense features of a synthetic dataset with n of
// them, x0 … x<n-1> (data.SynthFeatureNames), without listing them all.
func synthFeatures(n int) featureSet {
	return featureSet{
		has: func(name string) bool {
			j, err := strconv.Atoi(strings.TrimPrefix(name, "x"))
			return err == nil && j >= 0 && j < n && name == "x"+strconv.Itoa(j)
		},
		list: listSome(data.SynthFeatureNames(min(n, 9)), n),
	}
}

// featureSet is a dataset's dense features: a test of membership and a
// list for errors.
type featureSet struct {
	has  func(string) bool
	list string
}

// columns are what bag rules may name in a dataset: its dense features
// and integer key columns; what names the dataset in errors.
type columns struct {
	features featureSet
	keys     []string
	what     string
}

// synthName names the synthetic dataset in errors.
const synthName = "the synthetic dataset (data.synth)"

// CheckBagColumns checks every bag rule of the grid against a dataset's
// columns (Validate does it for a synthetic one; a caller that loads
// data.path does it once the columns are known): sorted:<feature> must
// name a dense feature, key:<column> an integer key column. dataset names
// the dataset in the error, a *FieldError naming pets[i].bags[j].
func (c *Config) CheckBagColumns(dataset string, features, keys []string) error {
	cols := columns{what: dataset, keys: keys, features: featureSet{
		has: func(name string) bool { return slices.Contains(features, name) }, list: listSome(features, len(features))}}
	for i, p := range c.Pets {
		if err := cols.check(i, p); err != nil {
			return err
		}
	}
	return nil
}

// check checks that every bag rule of pets[i] names a dense feature
// (sorted) or an integer key column (key) of the dataset, and so does
// ara_summary's key.
func (cols columns) check(i int, p PetConfig) error {
	rules, keys := p.Bags, make([]string, len(p.Bags))
	for j := range rules {
		keys[j] = fmt.Sprintf("pets[%d].bags[%d]", i, j)
	}
	if p.Key != "" {
		rules, keys = append(slices.Clone(rules), llp.Rule{Kind: llp.RuleKey, Column: p.Key}), append(keys, fmt.Sprintf("pets[%d].key", i))
	}
	for j, b := range rules {
		key := keys[j]
		switch b.Kind {
		case llp.RuleSorted:
			if !cols.features.has(b.Column) {
				return bad(key, "%s: %s has no dense feature %q (features: %s)", b, cols.what, b.Column, cols.features.list)
			}
		case llp.RuleKey:
			if !slices.Contains(cols.keys, b.Column) {
				hint := "none"
				if len(cols.keys) > 0 {
					hint = listSome(cols.keys, len(cols.keys))
				}
				if cols.features.has(b.Column) {
					hint += fmt.Sprintf("; %q is a float feature: keys are integer columns", b.Column)
				}
				if cols.what == synthName {
					hint += "; data.synth.groups > 0 adds the key column group"
				}
				return bad(key, "%s: %s has no integer key column %q (key columns: %s)", b, cols.what, b.Column, hint)
			}
		}
	}
	return nil
}

// listSome lists up to 8 of the first names of a list of total.
func listSome(names []string, total int) string {
	if total > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(", … (%d in all)", total)
	}
	return strings.Join(names, ", ")
}

// checkBinsPrior validates rr_bins's prior keys of pets[i] (key): one of
// prior_epsilon (in (0, ε) for every ε of the entry), prior (uniform,
// population) and prior_weights (finite, ≥ 0, not all 0; their number is
// checked against the dataset's grid when it is known); none of them on
// another kind.
func checkBinsPrior(key string, p PetConfig) error {
	set := 0
	for _, b := range []bool{p.PriorEpsilon != nil, p.Prior != "", p.PriorWeights != nil} {
		if b {
			set++
		}
	}
	if !p.Mechanism.Spec().Takes.ValuePrior {
		switch {
		case p.PriorEpsilon != nil:
			return bad(key+".prior_epsilon", "%s takes no private prior (only rr_bins does)", p.Mechanism)
		case p.Prior != "":
			return bad(key+".prior", "%s takes no prior over values (only rr_bins does)", p.Mechanism)
		case p.PriorWeights != nil:
			return bad(key+".prior_weights", "%s takes no prior over values (only rr_bins does)", p.Mechanism)
		}
		return nil
	}
	switch {
	case set == 0:
		return bad(key+".prior", "rr_bins needs its prior over the values: prior: population or uniform, or prior_weights: [one per grid point] "+
			"(public), or prior_epsilon: ε₁ (private: a noisy histogram of the training values)")
	case set > 1:
		return bad(key+".prior", "give one of prior, prior_weights and prior_epsilon")
	case p.Prior != "" && p.Prior != PriorUniform && p.Prior != PriorPopulation:
		return bad(key+".prior", "%q is not %s or %s (prior_weights gives one weight per grid point)", p.Prior, PriorPopulation, PriorUniform)
	}
	if e1 := p.PriorEpsilon; e1 != nil {
		for j, e := range p.Epsilon {
			if !(*e1 > 0 && *e1 < e) {
				return bad(key+".prior_epsilon", "must be in (0, ε) for every ε of the entry; epsilon[%d] is %v, prior_epsilon %v", j, e, *e1)
			}
		}
	}
	var sum float64
	for j, w := range p.PriorWeights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return bad(fmt.Sprintf("%s.prior_weights[%d]", key, j), "must be finite and ≥ 0, got %v", w)
		}
		sum += w
	}
	if p.PriorWeights != nil && !(sum > 0) {
		return bad(key+".prior_weights", "the weights are all 0")
	}
	return nil
}
