package pipeline

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"slices"
	"strings"

	"labelprivacy/audit"
	"labelprivacy/data"
	"labelprivacy/llp"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// Curated bags in the pipeline. A setting of the LLP family with
// bags: sorted:<feature> or key:<column> releases bags formed by that rule
// on the training rows (llp.Sorted on the feature's values, standardized or
// not: the order is the same; llp.Keyed on the key column), from the
// release's bag stream, with privacy.keep_remainder deciding the fate of
// leftover rows (a key group's leftovers: dropped, or one smaller bag of
// the group). The audit forms bags by the same rule on the audit examples
// and computes posteriors within them (audit.Options.Bags); kept smaller
// bags are audited too, since the release exposes them.

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
		return bad(key+".stage_fraction", "must be in (0, 1), got %v (leave the key out for the default %v)", *p.StageFraction, defaultStageFraction)
	case p.PriorLR != nil && (!(*p.PriorLR > 0) || math.IsInf(*p.PriorLR, 0)):
		return bad(key+".prior_lr", "must be finite and > 0, got %v (leave the key out for the middle of train.learning_rates)", *p.PriorLR)
	}
	if c.Data.Path == "" {
		var keys []string
		if c.Data.Synth.Groups > 0 {
			keys = []string{data.SynthGroupColumn}
		}
		return checkBagColumns(i, p, data.SynthFeatureNames(c.Data.Synth.Features), keys, "the synthetic dataset (data.synth)")
	}
	return nil
}

// checkBagColumns checks that every bag rule of pets[i] names a dense
// feature (sorted) or an integer key column (key) of the dataset.
func checkBagColumns(i int, p PetConfig, features, keys []string, what string) error {
	for j, b := range p.Bags {
		key := fmt.Sprintf("pets[%d].bags[%d]", i, j)
		switch b.Kind {
		case llp.RuleSorted:
			if !slices.Contains(features, b.Column) {
				return bad(key, "%s: %s has no dense feature %q (features: %s)", b, what, b.Column, listSome(features))
			}
		case llp.RuleKey:
			if !slices.Contains(keys, b.Column) {
				hint := "none"
				if len(keys) > 0 {
					hint = listSome(keys)
				}
				if slices.Contains(features, b.Column) {
					hint += fmt.Sprintf("; %q is a float feature: keys are integer columns", b.Column)
				}
				if what == "the synthetic dataset (data.synth)" {
					hint += "; data.synth.groups > 0 adds the key column group"
				}
				return bad(key, "%s: %s has no integer key column %q (key columns: %s)", b, what, b.Column, hint)
			}
		}
	}
	return nil
}

// listSome lists up to 8 names.
func listSome(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// checkDatasetBags checks every bag rule against a loaded dataset (the
// train frame; test has the same columns), before any work.
func (c *Config) checkDatasetBags(dir string, f *data.Frame) error {
	var keys []string
	for _, k := range f.Keys {
		keys = append(keys, k.Name)
	}
	for i, p := range c.Pets {
		if err := checkBagColumns(i, p, f.Features, keys, "dataset "+dir); err != nil {
			return err
		}
	}
	return nil
}

// checkKeyGroups refuses, before anything is written, a key:<column> bag
// rule under which no key group fills one bag of k while leftovers are
// dropped (privacy.keep_remainder false): among the training rows (the
// release would fail, after the ledger's key was made) or among the audit
// examples, the first min(audit.examples, test rows) test rows (the audit
// would fail after training).
func (c *Config) checkKeyGroups(dir string, train, test *data.Frame) error {
	if c.Privacy.KeepRemainder {
		return nil
	}
	n := min(c.Audit.Examples, test.Rows)
	type largest struct{ train, audit int }
	seen := map[string]largest{}
	for i, p := range c.Pets {
		for j, b := range p.Bags {
			if b.Kind != llp.RuleKey {
				continue
			}
			lg, ok := seen[b.Column]
			if !ok {
				lg = largest{train: largestGroup(train.Key(b.Column)), audit: -1}
				if keys := test.Key(b.Column); len(keys) >= n {
					lg.audit = largestGroup(keys[:n])
				}
				seen[b.Column] = lg
			}
			key := fmt.Sprintf("pets[%d].bags[%d]", i, j)
			const fix = "lower k, or set privacy.keep_remainder: true to release a group's leftover rows as one smaller bag"
			for m, k := range p.K {
				if lg.train < k {
					return bad(key, "%s: no key group of the %d training rows of %s has k = %d rows (pets[%d].k[%d]; the largest has %d), so no bag could be released: %s",
						b, train.Rows, dir, k, i, m, lg.train, fix)
				}
				if lg.audit >= 0 && lg.audit < k {
					return bad(key, "%s: no key group of the %d audit examples (the first test rows of %s) has k = %d rows (pets[%d].k[%d]; the largest has %d), so the audit could form no bag: %s",
						b, n, dir, k, i, m, lg.audit, fix)
				}
			}
		}
	}
	return nil
}

// largestGroup is the size of the largest group of equal keys (0 for none).
func largestGroup(keys []int64) int {
	count := map[int64]int{}
	best := 0
	for _, v := range keys {
		count[v]++
		best = max(best, count[v])
	}
	return best
}

// partitioner returns the bag rule of set bound to the first n rows of f
// (nil for random bags: release.Apply's and audit.Run's own random
// partition).
func partitioner(set *setting, f *data.Frame, n int) (llp.Partitioner, error) {
	switch b := set.Bags; b.Kind {
	case llp.RuleSorted:
		j := slices.Index(f.Features, b.Column)
		if j < 0 {
			return nil, fmt.Errorf("%s: no dense feature %q", set.ID, b.Column)
		}
		d := f.Dim()
		v := make([]float32, n)
		for i := range v {
			v[i] = f.X[i*d+j]
		}
		return llp.Sorted{Feature: b.Column, Values: v}, nil
	case llp.RuleKey:
		keys := f.Key(b.Column)
		if keys == nil {
			return nil, fmt.Errorf("%s: no key column %q", set.ID, b.Column)
		}
		return llp.Keyed{Column: b.Column, Keys: keys[:n]}, nil
	}
	return nil, nil
}

// applyRelease makes unit u's simulation release: rr_prior's two stages
// (training its prior model through exec), curated bags, or release.Apply
// as it always was. It returns the release and its metadata.
func (s *Session) applyRelease(ctx context.Context, exec executor, u releaseUnit) (*release.Release, map[string]string, error) {
	if u.s.Kind.Spec().Release.WithPrior() {
		return s.makeRRPriorRelease(ctx, exec, u)
	}
	o := release.Options{Noise: pets.NoiseSimulation, Seed: u.seed, KeepRemainder: s.cfg.Privacy.KeepRemainder}
	if u.s.Kind.IsLLP() {
		part, err := partitioner(u.s, s.train, s.train.Rows)
		if err != nil {
			return nil, nil, err
		}
		o.Partition = part
	}
	rel, err := release.Apply(s.train.Label, u.s.Mech, o)
	if err != nil {
		return nil, nil, err
	}
	if o.Partition != nil && rel.Dropped > 0 {
		s.ev.Info("release", fmt.Sprintf("%s: %d of %d rows left over by the bag rule were dropped (privacy.keep_remainder keeps them as smaller bags)",
			u.s.ID, rel.Dropped, rel.Input))
	}
	return rel, rel.Meta(), nil
}

// mechanismAuditOptions completes the audit options of set on the first n
// test rows: rr_prior's public priors, curated bags' actual bags. It returns
// the curated bag rule on those rows (nil for random bags and the other
// kinds), for the audit's sampler.
func (s *Session) mechanismAuditOptions(set *setting, n int, o *audit.Options) (llp.Partitioner, error) {
	switch {
	case set.Kind.Spec().Release.WithPrior():
		prior, err := s.auditPriors(set, n)
		if err != nil {
			return nil, err
		}
		o.Prior = prior
	case set.Kind.IsLLP() && set.Bags.Kind != llp.RuleRandom:
		part, err := partitioner(set, s.test, n)
		if err != nil {
			return nil, err
		}
		bags, err := part.Partition(n, set.K, mrand.NewPCG(deriveSeed(s.cfg.Seed, "audit-bags", set.ID), 0), s.cfg.Privacy.KeepRemainder)
		if err != nil {
			return nil, err
		}
		o.Bags = bags
		return part, nil
	}
	return nil, nil
}

// bagsName is the bags column of a setting's rows: the rule of the LLP
// family ("random", "sorted:x3", "key:campaign"), "" for the others.
func bagsName(set *setting) string {
	if !set.Kind.IsLLP() {
		return ""
	}
	return set.Bags.String()
}
