package release

import (
	"encoding/json"
	"fmt"

	"labelprivacy/ledger"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// Releases of conversion values (a mechanism on values, pets.ValueLaw):
// laplace and rr_bins release one value per row (value_rr, rows in input
// order; Ship shuffles them), value_bags one mean per bag (bag_id and
// bag_mean, bag order) through the partition of Options.Partition (random
// by default, or curated). rr_bins releases through RR-on-Bins made for a
// prior: a public one (ValueOptions.Prior), or a private one the release
// draws first from the values themselves (value_prior at the mechanism's
// PriorEpsilon, from the noise stream, before the bins' noise), each
// charged to the ledger as a step of its own (Entries). The metadata of
// an rr_bins release carries bin_edges (m + 1 cut points in value units,
// bin j = [edge_j, edge_{j+1}), the last B + step), bin_values and prior
// (JSON lists; the prior is public or differentially private), and
// nothing else of the values.

// ValueOptions are the options of a release of values beyond Options.
type ValueOptions struct {
	// Prior is rr_bins's public prior over the grid (its bins are made
	// from it); nil for a private prior, which the release draws.
	Prior []float64
	// Bins, instead of Prior, releases rr_bins through given bins (an
	// audit's sampler releasing through the bins it audits).
	Bins *pets.Bins
}

// Metadata keys of an rr_bins release.
const (
	MetaBinEdges  = "bin_edges"
	MetaBinValues = "bin_values"
	MetaPrior     = "prior"
)

// ApplyValues releases values (points of m's grid, one per input row)
// through m, a mechanism on conversion values. It reads nothing but the
// values, and the Release keeps nothing of them but what m releases (and,
// for rr_bins with a private prior, its noisy histogram). A value that is
// not a point of the grid is refused (ErrLabel) naming its row.
func ApplyValues(values []float64, m *pets.Mechanism, o Options, vo ValueOptions) (*Release, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("release: no values")
	}
	law := m.ValueLaw()
	if law == nil {
		return nil, fmt.Errorf("release: %s releases classes (Apply), not conversion values", m)
	}
	g := law.Grid()
	for i, v := range values {
		if _, ok := g.Index(v); !ok {
			return nil, fmt.Errorf("%w: value %v at row %d is not a point of the grid %s (%s)", ErrLabel, v, i, g, m)
		}
	}
	bagSrc, noiseSrc, orderSrc, err := o.sources()
	if err != nil {
		return nil, err
	}
	noise := noiseSrc.(pets.Rand)
	r := &Release{Mech: m, Noise: o.Noise, Input: len(values), order: orderSrc}
	switch law.Form() {
	case pets.ValueIdentity:
		return nil, ErrNoRelease
	case pets.ValueNothing:
	case pets.ValueLaplace:
		r.valueRR = make([]float64, len(values))
		law.Release(r.valueRR, values, nil, noise)
	case pets.ValueBins:
		if r.bins, err = r.binsFor(values, vo, noise); err != nil {
			return nil, err
		}
		r.valueRR = make([]float64, len(values))
		law.Release(r.valueRR, values, r.bins, noise)
	case pets.ValueBagMean:
		k, keep := m.K(), o.KeepRemainder
		if m.Spec().Takes.KeyGroups { // ara_summary: one bag per key group, whole whatever its size
			if o.Partition == nil || o.Partition.Rule().Kind != llp.RuleKey {
				return nil, fmt.Errorf("release: %s releases one value per group of a key column: it needs the key's groups (key:<column>)", m)
			}
			k, keep = len(values), true
		}
		var bags *llp.Bags
		if o.Partition == nil {
			bags, err = llp.Partition(len(values), k, bagSrc, keep)
		} else {
			r.rule = o.Partition.Rule()
			bags, err = o.Partition.Partition(len(values), k, bagSrc, keep)
		}
		if err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		r.releaseValueBags(values, bags, noise)
	default:
		return nil, fmt.Errorf("release: %s releases no values (form %d)", m, law.Form())
	}
	return r, nil
}

// binsFor returns the bins rr_bins releases through: given, made from the
// public prior, or from the private prior drawn here.
func (r *Release) binsFor(values []float64, vo ValueOptions, noise pets.Rand) (*pets.Bins, error) {
	m := r.Mech
	private := m.Params().PriorEpsilon > 0
	switch {
	case vo.Bins != nil:
		if vo.Bins.Grid != m.Grid() {
			return nil, fmt.Errorf("release: bins of the grid %s for %s", vo.Bins.Grid, m)
		}
		return vo.Bins, nil
	case private && vo.Prior != nil:
		return nil, fmt.Errorf("release: %s draws its private prior; it takes no public one", m)
	case !private && vo.Prior == nil:
		return nil, fmt.Errorf("release: %s needs a public prior over the grid (or prior_epsilon for a private one)", m)
	case private:
		r.privatePrior = true
		return m.Bins(m.PriorStage().Histogram(values, noise))
	}
	return m.Bins(vo.Prior)
}

// releaseValueBags releases each bag's mean value to its members.
func (r *Release) releaseValueBags(values []float64, bags *llp.Bags, noise pets.Rand) {
	law := r.Mech.ValueLaw()
	n := bags.Kept()
	r.rows, r.bagID, r.bagMean = make([]int, n), make([]int64, n), make([]float64, n)
	at := 0
	for b := range bags.NumBags {
		members := bags.Members(b)
		var sum float64
		for _, row := range members {
			sum += values[row]
		}
		z := law.ReleaseBag(sum, len(members), noise)
		for _, row := range members {
			r.rows[at], r.bagID[at], r.bagMean[at] = int(row), int64(b), z
			at++
		}
	}
	r.Bags, r.Dropped = bags.NumBags, bags.Dropped
}

// Bins returns the bins an rr_bins release went through (nil otherwise).
func (r *Release) Bins() *pets.Bins { return r.bins }

// valueMeta adds an rr_bins release's bins and prior to its metadata.
func (r *Release) valueMeta(md map[string]string) {
	if r.bins == nil {
		return
	}
	list := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err) // finite floats only
		}
		return string(b)
	}
	md[MetaBinEdges] = list(r.bins.EdgeValues())
	md[MetaBinValues] = list(r.bins.Values)
	md[MetaPrior] = list(r.bins.Prior)
}

// ReadBins reads the bins of an rr_bins release back from its metadata
// for the mechanism m it was made with: the bins of its prior (made again
// and checked against the recorded edges and values).
func ReadBins(md map[string]string, m *pets.Mechanism) (*pets.Bins, error) {
	var prior, edges, values []float64
	for _, f := range []struct {
		key string
		dst *[]float64
	}{{MetaPrior, &prior}, {MetaBinEdges, &edges}, {MetaBinValues, &values}} {
		if err := json.Unmarshal([]byte(md[f.key]), f.dst); err != nil {
			return nil, fmt.Errorf("release: metadata %s: %w", f.key, err)
		}
	}
	b, err := m.Bins(prior)
	if err != nil {
		return nil, fmt.Errorf("release: metadata %s: %w", MetaPrior, err)
	}
	got := b.EdgeValues()
	if len(got) != len(edges) || len(b.Values) != len(values) {
		return nil, fmt.Errorf("release: the recorded bins (%d edges) are not those of the recorded prior (%d)", len(edges), len(got))
	}
	for j := range got {
		if got[j] != edges[j] {
			return nil, fmt.Errorf("release: recorded bin edge %d is %v, the prior's %v", j, edges[j], got[j])
		}
	}
	for j := range values {
		if b.Values[j] != values[j] {
			return nil, fmt.Errorf("release: recorded bin value %d is %v, the prior's %v", j, values[j], b.Values[j])
		}
	}
	return b, nil
}

// Entries returns the ledger records of publishing r at path, in the
// order they are recorded: Entry's, and for rr_bins with a private prior
// first its prior's (value_prior at ε₁, every row in one draw: the
// histogram is one release of them all) and then the bins' (rr_bins at
// ε − ε₁), so that each person is charged each step once.
func (r *Release) Entries(path string, seed uint64) []ledger.Release {
	e := r.Entry(path, seed)
	if !r.privatePrior {
		return []ledger.Release{e}
	}
	prior := e
	prior.ID, prior.Mech, prior.Draws = newID(), r.Mech.PriorStage(), make([]int64, r.Rows())
	e.Mech = r.Mech.BinsStage()
	return []ledger.Release{prior, e}
}
