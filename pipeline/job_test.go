package pipeline

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
)

// A group's job hands the trainer every run's batch source already
// positioned at epoch 0 (its order made, on every core, before the
// trainer's probe and first step reuse it), each yielding the batches a
// source made alone from the run's release (or soft targets, or the clean
// labels) yields: the same rows and targets in the same order.
func TestJobSourcesPositioned(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Pets = append(c.Pets, config.PetConfig{Mechanism: pets.RRPrior, Epsilon: []float64{1}})
	c.Train.Replicas = config.Replicas{N: 64}
	s := openTest(t, c)
	ex := &fakeExec{t: t}
	if err := s.makeReleases(context.Background(), s.runs, ex); err != nil {
		t.Fatal(err)
	}
	f := &fitter{s: s, ev: s.ev}
	jobs := 0
	for _, g := range formGroups(s.runs, 64) {
		if !g.Runs[0].Setting.Trains() {
			continue
		}
		job, err := f.job(g, g.Runs, 1)
		if err != nil {
			t.Fatal(err)
		}
		jobs++
		for i, r := range g.Runs {
			bs, ok := job.Group.Replicas[i].Source.(*data.BatchSource)
			if !ok {
				t.Fatalf("run %s: source %T", r.ID, job.Group.Replicas[i].Source)
			}
			if e, ok := bs.Ordered(); e != 0 || !ok {
				t.Fatalf("run %s: the source holds no order of epoch 0 (%d, %v)", r.ID, e, ok)
			}
			src := s.train
			if r.Plan.Release != "" {
				if src, err = readRelease(r.Plan.Release); err != nil {
					t.Fatal(err)
				}
				if r.Plan.Target == data.TargetSoft {
					if src, err = softTargets(src, r.Setting, r.Plan.PriorTargets); err != nil {
						t.Fatal(err)
					}
				}
			}
			alone, err := data.NewBatchSource(src, r.Plan.BatchOptions(s.train.FeaturesOnly(), s.dataset.Meta.MaxIndices))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := drain(t, bs), drain(t, alone); !slices.Equal(got, want) {
				t.Fatalf("run %s (%s): the job's source yields other batches than one made alone", r.ID, r.Name())
			}
		}
	}
	if jobs < 4 {
		t.Fatalf("%d groups train; the test wants none, rr, llp_geom and rr_prior", jobs)
	}
}

// drain reads one epoch: each batch's row ids and targets, flattened.
func drain(t *testing.T, s *data.BatchSource) []float64 {
	t.Helper()
	var out []float64
	for {
		b, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b.RowIDs {
			out = append(out, float64(r))
		}
		for _, v := range b.Target {
			out = append(out, float64(v))
		}
	}
}
