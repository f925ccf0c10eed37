package model

import (
	"slices"
	"testing"

	"labelprivacy/data"
)

// countingSource is a BatchSource that is not a *data.BatchSource: the
// loop seeks it itself, one replica after another, as it always did.
type countingSource struct {
	*data.BatchSource
	seeks int
}

func (c *countingSource) SeekEpoch(e uint64) { c.seeks++; c.BatchSource.SeekEpoch(e) }

// orderEpoch makes the epoch's order of every distinct *data.BatchSource
// (a source two replicas share once) and leaves other sources alone.
func TestOrderEpochPositionsSources(t *testing.T) {
	w, b := trueModel(4, 2, 2)
	tr := makeLogistic(256, w, b, 3)
	feat := denseFrame(tr.X, 4)
	a := source(t, feat, srcOpts{labels: tr.Y, batch: 32, seed: 1})
	c := source(t, feat, srcOpts{labels: tr.Y, batch: 32, seed: 2})
	other := &countingSource{BatchSource: source(t, feat, srcOpts{labels: tr.Y, batch: 32, seed: 3})}
	orderEpoch([]Replica{{Source: a}, {Source: c}, {Source: a}, {Source: other}}, 3)
	for i, s := range []*data.BatchSource{a, c} {
		if e, ok := s.Ordered(); e != 3 || !ok {
			t.Fatalf("source %d holds epoch %d (%v), want 3", i, e, ok)
		}
	}
	if _, ok := other.BatchSource.Ordered(); ok || other.seeks != 0 {
		t.Fatalf("a source of another type was sought %d times by orderEpoch", other.seeks)
	}
}

// A group trained over three epochs with its sources ordered at once
// (orderEpoch) trains exactly what the same group trains when the loop
// seeks each source in turn (sources orderEpoch does not know): same
// losses, same predictions, bit for bit on the go backend.
func TestOrderEpochTrainsAlike(t *testing.T) {
	w, b := trueModel(8, 2, 2)
	tr := makeLogistic(1024, w, b, 3)
	te := makeLogistic(200, w, b, 4)
	feat := denseFrame(tr.X, 8)
	m := ModelConfig{Kind: KindMLP, InputDim: 8, Hidden: []int{16}}
	train := func(wrap bool) ([]float32, []float32, []int) {
		var reps []Replica
		var counted []*countingSource
		for i := range 3 {
			var src BatchSource = source(t, feat, srcOpts{labels: tr.Y, batch: 128, seed: uint64(10 + i)})
			if wrap {
				cs := &countingSource{BatchSource: src.(*data.BatchSource)}
				counted, src = append(counted, cs), cs
			}
			reps = append(reps, Replica{Seed: uint64(i + 1), LR: 1e-2, Source: src})
		}
		g := mustTrain(t, GroupConfig{Name: "order", Model: m, Loss: LossBCE, Epochs: 3, Features: feat, Replicas: reps})
		var losses []float32
		for _, r := range g.Results {
			losses = append(losses, float32(r.FinalLoss))
		}
		var seeks []int
		for _, cs := range counted {
			seeks = append(seeks, cs.seeks)
		}
		return losses, slices.Concat(mustPredict(t, g, denseFrame(te.X, 8))...), seeks
	}
	l1, p1, _ := train(false)
	l2, p2, seeks := train(true)
	if !slices.Equal(l1, l2) || !slices.Equal(p1, p2) {
		t.Fatalf("sources ordered at once trained otherwise: losses %v vs %v", l1, l2)
	}
	if !slices.Equal(seeks, []int{4, 4, 4}) { // the probe, then one seek per epoch
		t.Fatalf("the loop sought the wrapped sources %v times, want 4 each", seeks)
	}
}
