package pipeline

import (
	"fmt"
	"strconv"
	"strings"

	"labelprivacy/model"
)

// A runGroup is runs trained together as one unit — one compiled program
// training len(Runs) models on device-resident data when the executor
// supports it. Its runs share the dataset, the model, the loss (and bag
// size, for per-bag losses), the batch size and the epochs; everything else
// (learning rate, seeds, targets, bags, data order, optimizer state) is per
// run, and a run's result does not depend on its group (on backend go; on
// XLA only as on a seed: model's doc).
type runGroup struct {
	Loss      model.Loss
	BagSize   int // k for per-bag losses, else 0
	BatchSize int // rows per step and model
	Runs      []*runSpec
}

// Name describes the group in progress lines and errors.
func (g *runGroup) Name() string {
	if len(g.Runs) == 1 {
		return g.Runs[0].Name()
	}
	ids := map[string]bool{}
	var names []string
	for _, r := range g.Runs {
		if !ids[r.Setting.ID] {
			ids[r.Setting.ID] = true
			names = append(names, r.Setting.ID)
		}
	}
	return fmt.Sprintf("%d models of %s", len(g.Runs), strings.Join(names, ","))
}

// groupKey is what a group's runs share of their plans: one program
// trains them (Plan.Loss, BagSize, BatchSize).
type groupKey struct {
	loss         model.Loss
	bag, batches int
	sized        bool // bags of any size (key groups): bag is their slots a batch
}

// formGroups partitions the grid's runs into groups of at most replicas runs,
// deterministically: runs in grid order join the open group of their key
// (their plans' loss, bag size and batch size) and a full group is closed. Bot runs train nothing and
// form groups of one. formGroups come out in the order they were opened, so
// shards can partition them by index.
func formGroups(runs []*runSpec, replicas int) []*runGroup {
	var out []*runGroup
	open := map[groupKey]*runGroup{}
	for _, r := range runs {
		if !r.Setting.Trains() {
			out = append(out, newGroup(groupKey{}, r))
			continue
		}
		key := groupKey{loss: r.Plan.Loss, bag: r.Plan.BagSize, batches: r.Plan.BatchSize, sized: r.Plan.SizedBags}
		g := open[key]
		if g == nil || len(g.Runs) >= replicas {
			g = newGroup(key, r)
			open[key] = g
			out = append(out, g)
			continue
		}
		g.Runs = append(g.Runs, r)
	}
	return out
}

func newGroup(k groupKey, r *runSpec) *runGroup {
	return &runGroup{Loss: k.loss, BagSize: k.bag, BatchSize: k.batches, Runs: []*runSpec{r}}
}

func groupID(runs []*runSpec) string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return "g" + shortHash(ids)
}

// Shard is the I-th of N disjoint parts of a sweep: group j belongs to shard
// j mod N, so shards partition the groups (and so the runs) exactly.
type Shard struct{ I, N int }

// allShards is the whole sweep.
var allShards = Shard{0, 1}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Owns reports whether group j belongs to the shard.
func (s Shard) Owns(j int) bool { return j%s.N == s.I }

// parseShard parses "i/n" with 0 ≤ i < n.
func parseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 ≤ i < n", v)
	}
	return Shard{i, n}, nil
}
