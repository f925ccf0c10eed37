package pipeline

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"slices"

	"labelprivacy/audit"
	"labelprivacy/config"
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

// checkDatasetBags checks every bag rule against a loaded dataset (the
// train frame; test has the same columns), before any work.
func checkDatasetBags(c *config.Config, dir string, f *data.Frame) error {
	var keys []string
	for _, k := range f.Keys {
		keys = append(keys, k.Name)
	}
	return c.CheckBagColumns("dataset "+dir, f.Features, keys)
}

// checkKeyGroups refuses, before anything is written, a key:<column> bag
// rule under which no key group fills one bag of k while leftovers are
// dropped (privacy.keep_remainder false): among the training rows (the
// release would fail, after the ledger's key was made) or among the audit
// examples, the first min(audit.examples, test rows) test rows (the audit
// would fail after training).
func checkKeyGroups(c *config.Config, dir string, train, test *data.Frame) error {
	if err := checkSummaryKeys(c, dir, train, test); err != nil {
		return err
	}
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
					return &config.FieldError{Key: key, Msg: fmt.Sprintf("%s: no key group of the %d training rows of %s has k = %d rows (pets[%d].k[%d]; the largest has %d), so no bag could be released: %s",
						b, train.Rows, dir, k, i, m, lg.train, fix)}
				}
				if lg.audit >= 0 && lg.audit < k {
					return &config.FieldError{Key: key, Msg: fmt.Sprintf("%s: no key group of the %d audit examples (the first test rows of %s) has k = %d rows (pets[%d].k[%d]; the largest has %d), so the audit could form no bag: %s",
						b, n, dir, k, i, m, lg.audit, fix)}
				}
			}
		}
	}
	return nil
}

// checkSummaryKeys refuses, before anything is written, the key of a kind
// that sums whole key groups (ara_summary) when the training rows or the
// audit examples have no rows of it, or when a training group is larger
// than a batch (a group trains whole in one batch: train.batch_size).
func checkSummaryKeys(c *config.Config, dir string, train, test *data.Frame) error {
	n := min(c.Audit.Examples, test.Rows)
	for i, p := range c.Pets {
		if !p.Mechanism.Spec().Takes.KeyGroups {
			continue
		}
		key := fmt.Sprintf("pets[%d].key", i)
		keys, tk := train.Key(p.Key), test.Key(p.Key)
		switch {
		case len(keys) == 0:
			return &config.FieldError{Key: key, Msg: fmt.Sprintf("the training rows of %s have no rows of key column %q: no key to sum", dir, p.Key)}
		case len(tk) < n || n == 0:
			return &config.FieldError{Key: key, Msg: fmt.Sprintf("the audit examples (the first %d test rows of %s) have no rows of key column %q: no key group to audit", n, dir, p.Key)}
		}
		if lg := largestGroup(keys); lg > c.Train.BatchSize {
			return &config.FieldError{Key: "train.batch_size", Msg: fmt.Sprintf("%d: the largest group of key %q (pets[%d]) has %d training rows, and a key group trains whole in one batch: raise train.batch_size to at least %d",
				c.Train.BatchSize, p.Key, i, lg, lg)}
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
	var rel *release.Release
	var err error
	if s.values() {
		rel, err = release.ApplyValues(s.train.Value, u.s.Mech, o, release.ValueOptions{Prior: u.s.ValuePrior})
	} else {
		rel, err = release.Apply(s.train.Label, u.s.Mech, o)
	}
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
		part, bags, err := s.auditBags(set, n)
		if err != nil {
			return nil, err
		}
		o.Bags = bags
		return part, nil
	}
	return nil, nil
}

// auditBags are the bags of a curated or keyed setting on the first n
// test rows, as its releases form them (every key group whole for a kind
// of key groups: release.Apply's and ApplyValues's bags), with their rule.
func (s *Session) auditBags(set *setting, n int) (llp.Partitioner, *llp.Bags, error) {
	part, err := partitioner(set, s.test, n)
	if err != nil {
		return nil, nil, err
	}
	k, keep := set.K, s.cfg.Privacy.KeepRemainder
	if set.Kind.Spec().Takes.KeyGroups {
		k, keep = n, true
	}
	bags, err := part.Partition(n, k, mrand.NewPCG(deriveSeed(s.cfg.Seed, "audit-bags", set.ID), 0), keep)
	if err != nil {
		return nil, nil, err
	}
	return part, bags, nil
}

// bagsName is the bags column of a setting's rows: the rule of the LLP
// family ("random", "sorted:x3", "key:campaign"), "" for the others.
func bagsName(set *setting) string {
	if !set.Kind.IsLLP() {
		return ""
	}
	return set.Bags.String()
}
