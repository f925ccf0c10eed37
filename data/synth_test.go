package data

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/internal/stats"
)

func synth(t *testing.T, kind SynthKind, rows, test int, seed uint64) (string, *Meta) {
	t.Helper()
	out := filepath.Join(t.TempDir(), kind.String())
	m, err := Synth(context.Background(), SynthOptions{Kind: kind, Rows: rows, TestRows: test, Features: 5, Seed: seed, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	return out, m
}

// Round trip: what Synth wrote reads back identical to the frame the same
// seeded streams produce in memory.
func TestSynthRoundTrip(t *testing.T) {
	for _, kind := range []SynthKind{SynthLogistic, SynthBeta, SynthUniform} {
		t.Run(kind.String(), func(t *testing.T) {
			dir, meta := synth(t, kind, 3000, 500, 42)
			ds, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			m := newSynthModel(kind, 5, 42)
			wantTest := m.frame(SynthFeatureNames(5), 500, rand.New(rand.NewPCG(42, streamSynthTest)), 0)
			wantTrain := m.frame(SynthFeatureNames(5), 3000, rand.New(rand.NewPCG(42, streamSynthTrain)), 0)
			for _, c := range []struct {
				name      string
				got, want *Frame
			}{{"train", ds.Train, wantTrain}, {"test", ds.Test, wantTest}} {
				if !reflect.DeepEqual(c.got.X, c.want.X) || !reflect.DeepEqual(c.got.Label, c.want.Label) ||
					!reflect.DeepEqual(c.got.Eta, c.want.Eta) || !reflect.DeepEqual(c.got.Features, c.want.Features) {
					t.Fatalf("%s differs after the Arrow round trip", c.name)
				}
			}
			if got := stats.ExpectedAUC(ds.Test.Eta); meta.BayesAUC == nil || *meta.BayesAUC != got {
				t.Fatalf("meta bayes_auc %v, want %v", meta.BayesAUC, got)
			}
		})
	}
}

func TestSynthDeterministic(t *testing.T) {
	a, _ := synth(t, SynthLogistic, 1000, 100, 7)
	b, _ := synth(t, SynthLogistic, 1000, 100, 7)
	c, _ := synth(t, SynthLogistic, 1000, 100, 8)
	ab := mustRead(t, filepath.Join(a, TrainFile))
	if !bytes.Equal(ab, mustRead(t, filepath.Join(b, TrainFile))) {
		t.Fatal("same seed, different train.arrow bytes")
	}
	if bytes.Equal(ab, mustRead(t, filepath.Join(c, TrainFile))) {
		t.Fatal("different seeds, same train.arrow bytes")
	}
}

// Marginal η distributions. Tolerances are 5.3 standard errors of the mean
// (two-sided false-failure rate ≈ 1.2e-7 per check).
func TestSynthEtaDistributions(t *testing.T) {
	const n = 40000
	tests := []struct {
		kind     SynthKind
		mean, sd float64 // of η
	}{
		{SynthBeta, 2.0 / 32, math.Sqrt(2 * 30 / (32.0 * 32 * 33))},
		{SynthUniform, 0.5, math.Sqrt(1.0 / 12)},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			dir, _ := synth(t, tc.kind, n, 10, 3)
			ds, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			var sum, ones float64
			for i, e := range ds.Train.Eta {
				sum += e
				ones += float64(ds.Train.Label[i])
			}
			mean := sum / n
			if tol := 5.3 * tc.sd / math.Sqrt(n); math.Abs(mean-tc.mean) > tol {
				t.Fatalf("mean η %.5f, want %.5f ± %.5f", mean, tc.mean, tol)
			}
			// Labels are Bernoulli(η): their mean matches the η mean within
			// 5.3·sqrt(p(1−p)/n).
			p := ones / n
			if tol := 5.3 * math.Sqrt(mean*(1-mean)/n); math.Abs(p-mean) > tol {
				t.Fatalf("label mean %.5f, η mean %.5f (tol %.5f)", p, mean, tol)
			}
		})
	}
}

func TestBetaInverse(t *testing.T) {
	for _, p := range []float64{1e-9, 0.01, 0.3, 0.5, 0.9, 0.999999} {
		x := betaInv2(p, 30)
		if got := betaCDF2(x, 30); math.Abs(got-p) > 1e-12 {
			t.Fatalf("CDF(inv(%v)) = %v", p, got)
		}
	}
}

func TestSynthValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    SynthOptions
	}{
		{"no rows", SynthOptions{Kind: SynthBeta, Rows: 0, TestRows: 1, Features: 1, Out: "x"}},
		{"no test rows", SynthOptions{Kind: SynthBeta, Rows: 1, TestRows: 0, Features: 1, Out: "x"}},
		{"no features", SynthOptions{Kind: SynthBeta, Rows: 1, TestRows: 1, Features: 0, Out: "x"}},
		{"bad kind", SynthOptions{Kind: 9, Rows: 1, TestRows: 1, Features: 1, Out: "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Synth(context.Background(), tc.o); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, err := ParseSynthKind("gaussian"); err == nil {
		t.Fatal("ParseSynthKind accepted gaussian")
	}
}

// Synth refuses, before writing anything, an output larger than the free
// space of its filesystem (once it filled 75 GB before ENOSPC).
func TestSynthChecksFreeSpace(t *testing.T) {
	out := filepath.Join(t.TempDir(), "new", "ds") // not yet created
	// A cancelled context: should the check ever be lost, Synth stops after
	// the 10 test rows instead of filling the disk (a mutation test of this
	// check once wrote 45 GB in 5 minutes before it was killed).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Synth(ctx, SynthOptions{Kind: SynthLogistic, Rows: 1 << 40, TestRows: 10, Features: 28, Out: out})
	var se *SpaceError
	if !errors.As(err, &se) || !errors.Is(err, ErrNoSpace) {
		t.Fatalf("err = %v, want a *SpaceError", err)
	}
	if se.Dir != filepath.Dir(filepath.Dir(out)) || se.Need < 1<<40*(28*4+9) || se.Free <= 0 || se.Free >= se.Need {
		t.Fatalf("SpaceError %+v", se)
	}
	for _, s := range []string{se.Dir, strconv.FormatInt(se.Need, 10), strconv.FormatInt(se.Free, 10)} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not name %s", err, s)
		}
	}
	if _, err := os.Stat(filepath.Dir(out)); !os.IsNotExist(err) {
		t.Fatalf("the refused synth created %s", filepath.Dir(out))
	}
}

// The free-space margin scales with the output: a 1 MB dataset fits on a
// filesystem with 20 MB free (a fixed 64 MiB margin refused it), one with
// half of its margin missing does not, and large outputs keep 5% + 64 MiB.
func TestSynthSpaceMarginScales(t *testing.T) {
	small := SynthOptions{Kind: SynthLogistic, Rows: 40_000, TestRows: 1000, Features: 4}
	est := synthBytes(small)
	if est < 0.9e6 || est > 1.2e6 {
		t.Fatalf("the 1 MB case estimates %.0f bytes", est)
	}
	if err := fitsIn("/d", est, 20e6); err != nil {
		t.Fatalf("a 1 MB dataset on 20 MB free: %v", err)
	}
	if err := fitsIn("/d", est, int64(est)+(1<<19)); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("free just above the estimate: err = %v, want a margin", err)
	}
	for _, tc := range []struct{ est, min, max float64 }{
		{1e3, 1e3 + 1<<20, 1.06e3 + 1<<20},
		{1e6, 2.09e6, 2.1e6},
		{10e9, 10.5e9 + 64<<20, 10.5e9 + 64<<20},
	} {
		if got := spaceNeeded(tc.est); got < tc.min || got > tc.max {
			t.Errorf("spaceNeeded(%g) = %g, want in [%g, %g]", tc.est, got, tc.min, tc.max)
		}
	}
}

// The size estimate covers the real files within 5% + 64 KiB (a test of the
// estimate, so that the margin on top of it stays meaningful).
func TestSynthSizeEstimate(t *testing.T) {
	for _, o := range []SynthOptions{
		{Kind: SynthUniform, Rows: 150_000, TestRows: 1000, Features: 7, Seed: 1},
		{Kind: SynthMulticlass, Classes: 10, Rows: 150_000, TestRows: 1000, Features: 7, Seed: 1},
	} {
		o.Out = filepath.Join(t.TempDir(), "ds")
		if _, err := Synth(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		var size int64
		for _, f := range []string{TrainFile, TestFile} {
			st, err := os.Stat(filepath.Join(o.Out, f))
			if err != nil {
				t.Fatal(err)
			}
			size += st.Size()
		}
		est := synthBytes(o)
		t.Logf("%s: estimate %.0f bytes, files %d", o.Kind, est, size)
		if est < float64(size) || est > float64(size)*1.05+1<<16 {
			t.Fatalf("%s: estimate %.0f bytes for files of %d", o.Kind, est, size)
		}
	}
}
