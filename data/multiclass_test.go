package data

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"labelprivacy/pets"
)

// data.MaxClasses is pets.MaxClasses (data does not import pets).
func TestMaxClassesIsPets(t *testing.T) {
	if MaxClasses != pets.MaxClasses {
		t.Fatalf("data.MaxClasses %d, pets.MaxClasses %d", MaxClasses, pets.MaxClasses)
	}
}

// mcFrame is a labelled frame of n rows, d features and c ≥ 3 classes with
// η rows (a softmax of seeded logits) and labels row mod c.
func mcFrame(n, d, c int) *Frame {
	r := rand.New(rand.NewPCG(uint64(n), uint64(c)))
	f := &Frame{Rows: n, Features: SynthFeatureNames(d), X: make([]float32, n*d), Label: make([]uint8, n), Classes: c, EtaC: make([]float64, n*c)}
	for i := range n {
		for j := range d {
			f.X[i*d+j] = float32(i)
		}
		f.Label[i] = uint8(i % c)
		sum := 0.0
		for k := range c {
			f.EtaC[i*c+k] = math.Exp(r.NormFloat64())
			sum += f.EtaC[i*c+k]
		}
		for k := range c {
			f.EtaC[i*c+k] /= sum
		}
	}
	return f
}

// mcReleaseFrames are frames shaped like each C-class release (the
// columns the release package writes for C ≥ 3), with features.
func mcReleaseFrames(c int) map[string]*Frame {
	const n = 12
	base := func() *Frame {
		f := mcFrame(n, 2, c)
		f.Label, f.EtaC = nil, nil
		return f
	}
	r := rand.New(rand.NewPCG(5, uint64(c)))
	rr := base()
	rr.LabelRR = make([]uint8, n)
	for i := range rr.LabelRR {
		rr.LabelRR[i] = uint8(r.IntN(c))
	}
	prior := base()
	prior.LabelRR = make([]uint8, n)
	prior.PriorC, prior.PriorSet, prior.PriorSetSize = make([]float64, n*c), make([]uint64, n), make([]uint8, n)
	prior.Stage = make([]uint8, n)
	for i := range n {
		row := prior.PriorC[i*c : (i+1)*c]
		for k := range row {
			row[k] = 1 / float64(c)
		}
		prior.Stage[i] = 1
		mask := uint64(1)<<c - 1
		if c == 64 {
			mask = ^uint64(0)
		}
		if i >= 4 { // stage 2: a sharper prior, a set of its top (i mod 3)+1 classes
			prior.Stage[i] = 2
			k := i%3 + 1
			mask = 0
			for j := range k {
				mask |= 1 << ((i + j) % c)
			}
			in := 0.9 // prior mass on the set
			if k == c {
				in = 1
			}
			for cl := range row {
				row[cl] = (1 - in) / float64(c-k)
				if mask>>cl&1 == 1 {
					row[cl] = in / float64(k)
				}
			}
		}
		prior.PriorSet[i], prior.PriorSetSize[i] = mask, uint8(bits.OnesCount64(mask))
		members := []uint8{}
		for cl := range c {
			if mask>>cl&1 == 1 {
				members = append(members, uint8(cl))
			}
		}
		prior.LabelRR[i] = members[r.IntN(len(members))]
	}
	llp := base()
	llp.BagID = []int64{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}
	llp.AlphaC = make([]float64, n*(c-1))
	llp.AlphaDebiasedC = make([]float64, n*(c-1))
	for b := range 3 {
		alpha := make([]float64, c-1)
		for k := range alpha {
			alpha[k] = float64(r.IntN(5)) / 4 // clipped counts of a bag of 4
		}
		for i := b * 4; i < b*4+4; i++ {
			copy(llp.AlphaC[i*(c-1):], alpha)
			for k, a := range alpha {
				llp.AlphaDebiasedC[i*(c-1)+k] = a
				if a == 0 {
					llp.AlphaDebiasedC[i*(c-1)+k] = -0.0625 // debiased below 0
				}
			}
		}
	}
	sim := &Frame{Rows: n, Classes: c, LabelRR: rr.LabelRR, Row: []int64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}}
	soft := base()
	soft.SoftTargetC = make([]float64, n*c)
	for i := range soft.SoftTargetC {
		soft.SoftTargetC[i] = r.Float64()*1.4 - 0.2
	}
	return map[string]*Frame{"rr": rr, "rr_prior": prior, "llp_geom": llp, "simulation": sim, "soft": soft}
}

// Bad classes anywhere are one clear error naming the key `classes` (and
// the file, row and value where there is one).
func TestClassErrors(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// A dataset whose meta.json says 3 classes and whose train file holds a 5.
	badLabel := func() error {
		out := filepath.Join(dir, "badlabel")
		if _, err := Synth(ctx, SynthOptions{Kind: SynthMulticlass, Classes: 3, Rows: 50, TestRows: 10, Features: 2, Seed: 1, Out: out}); err != nil {
			t.Fatal(err)
		}
		f, err := ReadFrame(filepath.Join(out, TrainFile))
		if err != nil {
			t.Fatal(err)
		}
		f.Classes, f.EtaC = 0, nil
		f.Label[17] = 5
		f.Meta = nil
		// Written as a classless file (a tool that knows nothing of classes).
		if err := writeUnchecked(filepath.Join(out, TrainFile), f); err != nil {
			t.Fatal(err)
		}
		m, _ := ReadMeta(out)
		sum, _ := FileSHA256(filepath.Join(out, TrainFile))
		m.setContent(sum, m.TestSHA256)
		// The test file keeps its eta_c columns: drop them so the columns agree.
		g, _ := ReadFrame(filepath.Join(out, TestFile))
		g.Classes, g.EtaC = 0, nil
		writeUnchecked(filepath.Join(out, TestFile), g)
		tsum, _ := FileSHA256(filepath.Join(out, TestFile))
		m.setContent(sum, tsum)
		WriteMeta(out, m)
		_, err = Load(out)
		return err
	}
	metaClasses := func(v string) func() error {
		return func() error {
			out := filepath.Join(dir, "meta"+v)
			if _, err := Synth(ctx, SynthOptions{Kind: SynthLogistic, Rows: 20, TestRows: 5, Features: 2, Seed: 1, Out: out}); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(out, MetaFile))
			b = bytes.Replace(b, []byte(`"source"`), []byte(`"classes": `+v+`, "source"`), 1)
			os.WriteFile(filepath.Join(out, MetaFile), b, 0o644)
			_, err := Load(out)
			return err
		}
	}
	libsvm := func(classes int, body string) func() error {
		return func() error {
			in := writeFile(t, dir, "in.libsvm", []byte(body))
			_, err := ImportLibSVM(ctx, ImportOptions{In: in, Out: filepath.Join(dir, "lib"), TestRows: 1, Classes: classes, HashBuckets: 10})
			return err
		}
	}
	frame := func(mut func(f *Frame)) func() error {
		return func() error {
			f := mcFrame(6, 2, 4)
			mut(f)
			return f.Validate()
		}
	}
	readBack := func(mut func(f *Frame) (*Frame, map[string]string)) func() error {
		return func() error {
			f, md := mut(mcFrame(6, 2, 4))
			p := filepath.Join(t.TempDir(), "f.arrow")
			if err := writeUncheckedMeta(p, f, md); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFrame(p)
			return err
		}
	}
	higgs := writeFile(t, dir, "higgs.csv", higgsCSV(20, 1))
	tests := []struct {
		name  string
		run   func() error
		is    error
		words []string
	}{
		{"label ≥ C in a dataset", badLabel, ErrLabel, []string{"train.arrow", "row 17", "value 5", "classes = 3"}},
		{"label ≥ C in a frame", frame(func(f *Frame) { f.Label[2] = 4 }), ErrLabel, []string{"row 2", "value 4", "classes = 4"}},
		{"label_rr ≥ C", frame(func(f *Frame) { f.LabelRR = []uint8{0, 1, 2, 3, 9, 0} }), ErrLabel, []string{"label_rr", "row 4", "value 9"}},
		{"C > 64 in meta.json", metaClasses("65"), ErrInvalid, []string{MetaFile, "classes", "65"}},
		{"C = 1 in meta.json", metaClasses("1"), ErrInvalid, []string{MetaFile, "classes", "got 1"}},
		{"C > 64 in a frame", frame(func(f *Frame) { f.Classes = 65 }), ErrSchema, []string{"classes", "65"}},
		{"C = 1 in a frame", frame(func(f *Frame) { f.Classes = 1 }), ErrSchema, []string{"classes", "1"}},
		{"synth C > 64", func() error {
			_, err := Synth(ctx, SynthOptions{Kind: SynthMulticlass, Classes: 65, Rows: 1, TestRows: 1, Features: 1, Out: filepath.Join(dir, "s")})
			return err
		}, ErrInvalid, []string{"classes", "65"}},
		{"synth C < 2", func() error {
			_, err := Synth(ctx, SynthOptions{Kind: SynthMulticlass, Classes: 1, Rows: 1, TestRows: 1, Features: 1, Out: filepath.Join(dir, "s")})
			return err
		}, ErrInvalid, []string{"classes", "got 1"}},
		{"synth multiclass without classes", func() error {
			_, err := Synth(ctx, SynthOptions{Kind: SynthMulticlass, Rows: 1, TestRows: 1, Features: 1, Out: filepath.Join(dir, "s")})
			return err
		}, ErrInvalid, []string{"classes", "multiclass"}},
		{"synth binary kind with classes 3", func() error {
			_, err := Synth(ctx, SynthOptions{Kind: SynthBeta, Classes: 3, Rows: 1, TestRows: 1, Features: 1, Out: filepath.Join(dir, "s")})
			return err
		}, ErrInvalid, []string{"classes 3", "beta"}},
		{"libsvm label = C", libsvm(3, "0 1:1\n2 2:1\n3 3:1\n"), ErrLabel, []string{"in.libsvm:3:", `"3"`, "classes 3"}},
		{"libsvm label -1", libsvm(4, "0 1:1\n-1 2:1\n"), ErrLabel, []string{"in.libsvm:2:", `"-1"`}},
		{"libsvm label 1.5", libsvm(4, "0 1:1\n1 2:1\n1.5 2:1\n"), ErrLabel, []string{"in.libsvm:3:", `"1.5"`}},
		{"libsvm classes 65", libsvm(65, "0 1:1\n"), ErrInvalid, []string{"classes", "65"}},
		{"libsvm classes 1", libsvm(1, "0 1:1\n"), ErrInvalid, []string{"classes", "got 1"}},
		{"higgs classes 3", func() error {
			_, err := ImportHiggs(ctx, ImportOptions{In: higgs, Out: filepath.Join(dir, "h"), TestRows: 5, Classes: 3})
			return err
		}, ErrInvalid, []string{"classes 3", "binary"}},
		{"binary-only column at C ≥ 3", frame(func(f *Frame) { f.Alpha = make([]float64, 6) }), ErrSchema, []string{"alpha", "binary-only"}},
		{"per-class column at C = 2", func() error {
			f := testFrame(3, 1)
			f.AlphaC = []float64{0.5, 0.5, 0.5}
			return f.Validate()
		}, ErrSchema, []string{"alpha_", "classes ≥ 3"}},
		{"eta row not summing to 1", frame(func(f *Frame) { f.EtaC[5] += 0.01 }), ErrInvalid, []string{"row 1", "sum"}},
		{"eta outside [0,1]", frame(func(f *Frame) { f.EtaC[0], f.EtaC[1] = -0.1, f.EtaC[1]+0.1 }), ErrInvalid, []string{"row 0", "eta_0"}},
		{"alpha NaN", frame(func(f *Frame) { f.AlphaC = make([]float64, 18); f.AlphaC[4] = math.NaN() }), ErrInvalid, []string{"row 1", "alpha_2"}},
		{"short per-class column", frame(func(f *Frame) { f.PriorC = make([]float64, 7) }), ErrSchema, []string{"prior_", "6 rows × 4"}},
		{"prior_set size wrong", frame(func(f *Frame) { f.PriorSet, f.PriorSetSize = make([]uint64, 6), make([]uint8, 6); fillSets(f, 0b11, 1) }), ErrInvalid, []string{"prior_set_size 1"}},
		{"prior_set beyond C", frame(func(f *Frame) {
			f.PriorSet, f.PriorSetSize = make([]uint64, 6), make([]uint8, 6)
			fillSets(f, 0b10001, 2)
		}), ErrInvalid, []string{"prior_set", "0..3"}},
		{"released class outside the set", frame(func(f *Frame) {
			f.Label = nil
			f.LabelRR = []uint8{1, 1, 1, 1, 1, 2}
			f.PriorSet, f.PriorSetSize = make([]uint64, 6), make([]uint8, 6)
			fillSets(f, 0b11, 2)
		}), ErrInvalid, []string{"row 5", "released class 2"}},
		{"prior_set without its size", frame(func(f *Frame) { f.PriorSet = make([]uint64, 6) }), ErrSchema, []string{"prior_set_size"}},
		{"metadata classes not a number", readBack(func(f *Frame) (*Frame, map[string]string) {
			return f, map[string]string{MetaClasses: "ten"}
		}), ErrSchema, []string{"classes", `"ten"`}},
		{"metadata classes vs columns", readBack(func(f *Frame) (*Frame, map[string]string) {
			return f, map[string]string{MetaClasses: "5"}
		}), ErrSchema, []string{"classes 5", "eta_… columns: 4"}},
		{"meta.json classes vs the files", func() error {
			out := filepath.Join(dir, "mismatch")
			if _, err := Synth(ctx, SynthOptions{Kind: SynthMulticlass, Classes: 4, Rows: 20, TestRows: 5, Features: 2, Seed: 1, Out: out}); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(out, MetaFile))
			os.WriteFile(filepath.Join(out, MetaFile), bytes.Replace(b, []byte(`"classes": 4`), []byte(`"classes": 6`), 1), 0o644)
			_, err := Load(out)
			return err
		}, ErrMismatch, []string{TrainFile, "classes 4", "meta.json: 6"}},
		{"metadata classes 65", readBack(func(f *Frame) (*Frame, map[string]string) {
			return f, map[string]string{MetaClasses: "65"}
		}), ErrSchema, []string{"classes", `"65"`}},
		{"a family missing a class", readBack(func(f *Frame) (*Frame, map[string]string) {
			return f, map[string]string{"drop": ClassColumn(ColEtaPrefix, 2)}
		}), ErrSchema, []string{"lack eta_2"}},
		{"per-class columns of 2 classes", readBack(func(f *Frame) (*Frame, map[string]string) {
			return f, map[string]string{"drop": "eta_2,eta_3", MetaClasses: ""}
		}), ErrSchema, []string{"eta_", "classes ≥ 3"}},
		{"writer metadata disagrees", func() error {
			return WriteFrame(filepath.Join(t.TempDir(), "x.arrow"), mcFrame(3, 1, 4), map[string]string{MetaClasses: "7"})
		}, ErrSchema, []string{"classes", `"7"`, "4 classes"}},
		{"batch classes 65", func() error {
			_, err := NewBatchSource(mcFrame(6, 1, 4), BatchOptions{BatchSize: 2, Target: TargetLabel, Classes: 65})
			return err
		}, ErrInvalid, []string{"classes", "65"}},
		{"batch classes vs frame", func() error {
			_, err := NewBatchSource(mcFrame(6, 1, 4), BatchOptions{BatchSize: 2, Target: TargetLabel, Classes: 5})
			return err
		}, ErrInvalid, []string{"classes 5", "4 classes"}},
		{"batch binary options on a C-class frame", func() error {
			_, err := NewBatchSource(mcFrame(6, 1, 4), BatchOptions{BatchSize: 2, Target: TargetLabel})
			return err
		}, ErrInvalid, []string{"classes 2", "4 classes"}},
		{"batch label ≥ C in an unvalidated frame", func() error {
			f := mcFrame(6, 1, 4)
			f.Label[3] = 7
			_, err := NewBatchSource(f, BatchOptions{BatchSize: 2, Target: TargetLabel, Classes: 4})
			return err
		}, ErrLabel, []string{"row 3", "value 7", "classes = 4"}},
		{"batch soft target missing", func() error {
			_, err := NewBatchSource(mcFrame(6, 1, 4), BatchOptions{BatchSize: 2, Target: TargetSoft, Classes: 4})
			return err
		}, ErrSchema, []string{"soft_target_0"}},
		{"batch alpha missing", func() error {
			f := mcFrame(6, 1, 4)
			f.BagID = make([]int64, 6)
			_, err := NewBatchSource(f, BatchOptions{BatchSize: 6, BagSize: 6, Target: TargetAlphaDebiased, Classes: 4})
			return err
		}, ErrSchema, []string{"alpha_debiased_1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", err, tc.is)
			}
			for _, w := range tc.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// fillSets gives every row of f the set mask of size k.
func fillSets(f *Frame, mask uint64, k uint8) {
	for i := range f.PriorSet {
		f.PriorSet[i], f.PriorSetSize[i] = mask, k
	}
}

// writeUnchecked writes f as an Arrow file without Validate (a file from
// another tool), with f's classes in the metadata for C ≥ 3.
func writeUnchecked(path string, f *Frame) error { return writeUncheckedMeta(path, f, nil) }

// writeUncheckedMeta is writeUnchecked with metadata md; md["drop"] lists
// columns (comma-separated) left out of the file, and an empty
// md["classes"] leaves classes out of the metadata.
func writeUncheckedMeta(path string, f *Frame, md map[string]string) error {
	drop := map[string]bool{}
	meta := map[string]string{}
	for k, v := range md {
		if k == "drop" {
			for _, c := range strings.Split(v, ",") {
				drop[c] = true
			}
			continue
		}
		meta[k] = v
	}
	schema := Schema(f, nil)
	if v, ok := md[MetaClasses]; ok {
		delete(meta, MetaClasses)
		if v != "" {
			meta[MetaClasses] = v
		}
	} else if c := f.NumClasses(); c >= 3 {
		meta[MetaClasses] = fmt.Sprint(c)
	}
	rec, err := record(schema, f)
	if err != nil {
		return err
	}
	defer rec.Release()
	var fields []arrow.Field
	var cols []arrow.Array
	for i, fl := range schema.Fields() {
		if !drop[fl.Name] {
			fields = append(fields, fl)
			cols = append(cols, rec.Column(i))
		}
	}
	m := sortedMetadata(meta)
	return writeRecord(path, arrow.NewSchema(fields, &m), cols, int64(f.Rows))
}

// Every C-class release column round-trips through Arrow IPC and Parquet
// (as pyarrow writes it) bit for bit, as plain primitive columns with
// "classes" in the schema metadata; a release frame carries no raw column.
func TestMulticlassReleaseColumnsRoundTrip(t *testing.T) {
	for _, c := range []int{3, 10, 64} {
		for name, f := range mcReleaseFrames(c) {
			t.Run(fmt.Sprint(name, "/C=", c), func(t *testing.T) {
				if err := f.Validate(); err != nil {
					t.Fatal(err)
				}
				if raw := f.RawLabelColumns(); raw != nil {
					t.Fatalf("release frame carries raw columns %v", raw)
				}
				p := filepath.Join(t.TempDir(), "r.arrow")
				md := map[string]string{"mechanism": name}
				if err := WriteFrame(p, f, md); err != nil {
					t.Fatal(err)
				}
				back, err := ReadFrame(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := framesEqual(back, f); err != nil {
					t.Fatal(err)
				}
				if back.Meta[MetaClasses] != fmt.Sprint(c) || back.Meta["mechanism"] != name {
					t.Fatalf("metadata %v", back.Meta)
				}
				// Plain columns: uint8 classes, float64 per-class values,
				// uint64 set masks; names as documented.
				s, err := ReadSchema(p)
				if err != nil || s.NumClasses() != c {
					t.Fatalf("ReadSchema: %v classes %d", err, s.NumClasses())
				}
				schema := checkArrowFile(t, p)
				for _, fl := range schema.Fields() {
					want := map[string]arrow.Type{ColLabelRR: arrow.UINT8, ColPriorSet: arrow.UINT64, ColPriorSetSize: arrow.UINT8,
						ColStage: arrow.UINT8, ColBagID: arrow.INT64, ColRow: arrow.INT64, "x0": arrow.FLOAT32, "x1": arrow.FLOAT32}[fl.Name]
					if want == 0 {
						want = arrow.FLOAT64
						if _, _, ok, _ := classColumnOf(fl.Name); !ok {
							t.Fatalf("unexpected column %q", fl.Name)
						}
					}
					if fl.Type.ID() != want {
						t.Fatalf("column %q is %s", fl.Name, fl.Type)
					}
				}
				if f.AlphaC != nil {
					for k := 1; k < c; k++ {
						if len(schema.FieldIndices(ClassColumn(ColAlphaPrefix, k))) != 1 {
							t.Fatalf("no column alpha_%d", k)
						}
					}
				}
				pq := filepath.Join(t.TempDir(), "r.parquet")
				if err := os.WriteFile(pq, frameParquet(t, f), 0o644); err != nil {
					t.Fatal(err)
				}
				back, err = ReadFrame(pq)
				if err != nil {
					t.Fatal(err)
				}
				if err := framesEqual(back, f); err != nil {
					t.Fatalf("parquet: %v", err)
				}
			})
		}
	}
	f := mcFrame(4, 1, 3)
	if got := f.RawLabelColumns(); !slices.Equal(got, []string{ColLabel, "eta_0", "eta_1", "eta_2"}) {
		t.Fatalf("RawLabelColumns %v", got)
	}
}

// The multiclass synth: η rows are probability vectors (sum 1 within 1e-12),
// labels are in 0..C−1 and drawn from η, the files round-trip to the
// seeded in-memory draw, the Bayes accuracy recorded is recomputed from
// test.arrow, and the calibration holds at C = 10, D = 16.
func TestSynthMulticlass(t *testing.T) {
	const rows, c, d = 40000, 10, 16
	out := filepath.Join(t.TempDir(), "mc")
	meta, err := Synth(context.Background(), SynthOptions{Kind: SynthMulticlass, Classes: c, Rows: rows, TestRows: 5000, Features: d, Seed: 3, Groups: 4, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Classes != c || ds.Meta.Classes != c || ds.Train.Classes != c || ds.Test.Classes != c || ds.Train.Eta != nil || ds.Train.Key(SynthGroupColumn) == nil {
		t.Fatalf("classes meta %d, train %d, test %d; eta %v", meta.Classes, ds.Train.Classes, ds.Test.Classes, ds.Train.Eta != nil)
	}
	m := newMulticlassModel(c, d, 3)
	want := m.frame(SynthFeatureNames(d), rows, rand.New(rand.NewPCG(3, streamSynthTrain)), 4)
	if !slices.Equal(ds.Train.X, want.X) || !slices.Equal(ds.Train.Label, want.Label) || !slices.Equal(ds.Train.EtaC, want.EtaC) {
		t.Fatal("train.arrow differs from the seeded draw")
	}
	if !reflect.DeepEqual(meta.ClassWeights, m.weightRows()) || meta.LogitNorm != MulticlassLogitNorm {
		t.Fatal("meta.json's weights are not the model's")
	}
	for i := range ds.Train.Rows {
		sum := 0.0
		for _, e := range ds.Train.EtaC[i*c : (i+1)*c] {
			if !(e >= 0 && e <= 1) {
				t.Fatalf("row %d: η %v", i, e)
			}
			sum += e
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("row %d: η sums to %v", i, sum)
		}
	}
	// Class frequencies against mean η: given x the count of class k is a
	// sum of independent Bernoulli(η_k(x_i)), mean Σ_i η_ik and variance
	// Σ_i η_ik(1−η_ik); so is the count of labels equal to argmax η, with
	// mean Σ_i max_k η_ik (calibration: the marginal counts alone cannot see
	// labels drawn from a tempered η, the classes being alike in law). The
	// tolerance is 5 standard deviations: a two-sided false-failure rate of
	// 5.7e-7 per check, < 7e-6 for the 11. (Mutations: labels drawn from η
	// tempered by 0.9, η^0.9 normalized, move the argmax count by 11 SD;
	// class 0's draws given to class 1 move class 0's count by 137.)
	counts := make([]float64, c)
	var hits, maxSum, maxVar float64
	for i, y := range ds.Train.Label {
		counts[y]++
		row := ds.Train.EtaC[i*c : (i+1)*c]
		best := 0
		for k, e := range row {
			if e > row[best] {
				best = k
			}
		}
		maxSum += row[best]
		maxVar += row[best] * (1 - row[best])
		if int(y) == best {
			hits++
		}
	}
	if z := (hits - maxSum) / math.Sqrt(maxVar); math.Abs(z) > 5 {
		t.Errorf("%v labels are argmax η, Σ max η = %.1f (z = %.2f)", hits, maxSum, z)
	}
	for k := range c {
		var mean, v float64
		for i := range ds.Train.Rows {
			e := ds.Train.EtaC[i*c+k]
			mean += e
			v += e * (1 - e)
		}
		if z := (counts[k] - mean) / math.Sqrt(v); math.Abs(z) > 5 {
			t.Errorf("class %d: %v labels, Σ η = %.1f (z = %.2f)", k, counts[k], mean, z)
		}
		if math.Abs(meta.ClassRates[k]-counts[k]/rows) > 1e-15 {
			t.Errorf("class_rates[%d] %v, counted %v", k, meta.ClassRates[k], counts[k]/rows)
		}
	}
	if meta.PositiveRate != nil {
		t.Errorf("positive_rate %v for %d classes, want none", *meta.PositiveRate, c)
	}
	if b, err := os.ReadFile(filepath.Join(out, MetaFile)); err != nil || bytes.Contains(b, []byte("positive_rate")) {
		t.Errorf("meta.json of %d classes carries positive_rate (%v):\n%s", c, err, b)
	}
	exp, emp := BayesAccuracy(ds.Test)
	if meta.BayesAccuracy == nil || *meta.BayesAccuracy != exp || *meta.BayesAccuracyEmpirical != emp || meta.BayesAUC != nil {
		t.Fatalf("meta bayes_accuracy %v/%v, recomputed %v/%v; bayes_auc %v", meta.BayesAccuracy, meta.BayesAccuracyEmpirical, exp, emp, meta.BayesAUC)
	}
	// The logit norm's calibration: learnable, not trivial. The empirical
	// accuracy on 5,000 test labels is within 5 SE (±0.03) of the expected.
	t.Logf("C=%d D=%d: Bayes accuracy %.4f expected, %.4f on the test labels", c, d, exp, emp)
	if exp < 0.72 || exp > 0.82 || math.Abs(emp-exp) > 5*math.Sqrt(exp*(1-exp)/5000) {
		t.Fatalf("Bayes accuracy %.4f (empirical %.4f), want ≈ 0.77", exp, emp)
	}
	// The metadata and json agree.
	b, _ := os.ReadFile(filepath.Join(out, MetaFile))
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil || raw["classes"] != float64(c) || raw["bayes_accuracy"] == nil {
		t.Fatalf("meta.json %s", b)
	}
}

// Same seed, same bytes; another seed, other bytes; and C = 2 is a binary
// dataset (labels 0/1, `eta` = η_1, no classes in the files).
func TestSynthMulticlassDeterministicAndBinary(t *testing.T) {
	mk := func(seed uint64, c int) (string, *Meta) {
		out := filepath.Join(t.TempDir(), "mc")
		m, err := Synth(context.Background(), SynthOptions{Kind: SynthMulticlass, Classes: c, Rows: 3000, TestRows: 100, Features: 4, Seed: seed, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		return out, m
	}
	a, ma := mk(7, 5)
	b, mb := mk(7, 5)
	c, _ := mk(8, 5)
	for _, f := range []string{TrainFile, TestFile} {
		if !bytes.Equal(mustRead(t, filepath.Join(a, f)), mustRead(t, filepath.Join(b, f))) {
			t.Fatalf("same seed, different %s", f)
		}
		if bytes.Equal(mustRead(t, filepath.Join(a, f)), mustRead(t, filepath.Join(c, f))) {
			t.Fatalf("different seeds, same %s", f)
		}
	}
	if ma.ContentSHA256 != mb.ContentSHA256 {
		t.Fatal("same seed, different identity")
	}
	out, m := mk(7, 2)
	ds, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	md, err := ReadMetadata(filepath.Join(out, TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := md[MetaClasses]; ok || ds.Train.Classes != 0 || ds.Train.EtaC != nil || ds.Train.Eta == nil || m.BayesAUC == nil || m.NumClasses() != 2 {
		t.Fatalf("C = 2: metadata %v, frame classes %d, eta %v, meta %+v", md, ds.Train.Classes, ds.Train.Eta != nil, m)
	}
	for i, y := range ds.Train.Label {
		if y > 1 {
			t.Fatalf("row %d label %d", i, y)
		}
	}
	// η_1 of the 2-class softmax is σ(z_1 − z_0).
	mm := newMulticlassModel(2, 4, 7)
	x := ds.Train.X[:4]
	var z0, z1 float64
	for j, v := range x {
		z0 += mm.w[j] * float64(v)
		z1 += mm.w[4+j] * float64(v)
	}
	if want := 1 / (1 + math.Exp(z0-z1)); math.Abs(ds.Train.Eta[0]-want) > 1e-12 {
		t.Fatalf("eta %v, want σ(z1−z0) = %v", ds.Train.Eta[0], want)
	}
}

// The libsvm importer with classes: labels 0..C−1 (also written "3.0"),
// meta.json records classes and class rates, the files carry "classes".
func TestImportLibSVMClasses(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "mc.libsvm", []byte("4 1:1\n0 2:1 3:1\n3.0 1:1\n1 7:1\n2 2:1\n4 9:1 # five\n0 5:1\n"))
	out := filepath.Join(dir, "ds")
	m, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: out, TestRows: 2, Classes: 5, HashBuckets: 16})
	if err != nil {
		t.Fatal(err)
	}
	if m.Classes != 5 || !slices.Equal(m.ClassRates, []float64{0.2, 0.2, 0.2, 0.2, 0.2}) || m.PositiveRate != nil {
		t.Fatalf("meta classes %d rates %v positive %v", m.Classes, m.ClassRates, m.PositiveRate)
	}
	if b, err := os.ReadFile(filepath.Join(out, MetaFile)); err != nil || bytes.Contains(b, []byte("positive_rate")) {
		t.Errorf("meta.json of 5 classes carries positive_rate (%v):\n%s", err, b)
	}
	ds, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Test.Label, []uint8{4, 0}) || !slices.Equal(ds.Train.Label, []uint8{3, 1, 2, 4, 0}) || ds.Train.Classes != 5 {
		t.Fatalf("labels %v %v classes %d", ds.Test.Label, ds.Train.Label, ds.Train.Classes)
	}
	if md, _ := ReadMetadata(filepath.Join(out, TrainFile)); md[MetaClasses] != "5" {
		t.Fatalf("train.arrow metadata %v", md)
	}
	// A C-class libsvm file imported as binary fails on its first label ≥ 2.
	_, err = ImportLibSVM(context.Background(), ImportOptions{In: in, Out: filepath.Join(dir, "bin"), TestRows: 2})
	if !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), in+":1:") {
		t.Fatalf("binary import of C-class labels: %v", err)
	}
	// Binary with classes 2 is the binary import.
	bin := writeFile(t, dir, "b.libsvm", []byte("+1 1:1\n-1 2:1\n1 3:1\n"))
	m2, err := ImportLibSVM(context.Background(), ImportOptions{In: bin, Out: filepath.Join(dir, "b2"), TestRows: 1, Classes: 2})
	if err != nil || m2.Classes != 0 || m2.ClassRates != nil {
		t.Fatalf("classes 2: %v, meta classes %d rates %v", err, m2.Classes, m2.ClassRates)
	}
}

// C-class batches: one-hot labels, proportion vectors per bag (class 0 =
// 1 − Σ, unclipped), soft vectors per row; the source keeps labels as bytes
// and one vector per bag.
func TestBatchSourceClasses(t *testing.T) {
	const c = 4
	t.Run("one-hot", func(t *testing.T) {
		for _, target := range []Target{TargetLabel, TargetLabelRR} {
			f := mcFrame(23, 2, c)
			f.LabelRR = slices.Clone(f.Label)
			slices.Reverse(f.LabelRR)
			s, err := NewBatchSource(f, BatchOptions{BatchSize: 5, Target: target, Classes: c, Shuffle: true, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if s.target != nil || s.soft != nil {
				t.Fatal("the source copied the labels")
			}
			labels := f.Label
			if target == TargetLabelRR {
				labels = f.LabelRR
			}
			seen := 0
			for {
				b, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if b.TargetWidth != c || len(b.Target) != b.Rows*c {
					t.Fatalf("width %d, %d targets for %d rows", b.TargetWidth, len(b.Target), b.Rows)
				}
				for r := range b.Rows {
					row := int(b.RowIDs[r])
					for k := range c {
						want := float32(0)
						if k == int(labels[row]) {
							want = 1
						}
						if b.Target[r*c+k] != want {
							t.Fatalf("%s row %d: target %v, class %d", target, row, b.Target[r*c:(r+1)*c], labels[row])
						}
					}
					seen++
				}
			}
			if seen != 23 {
				t.Fatalf("%d rows an epoch", seen)
			}
		}
	})
	t.Run("soft", func(t *testing.T) {
		f := mcReleaseFrames(c)["soft"]
		s, err := NewBatchSource(f, BatchOptions{BatchSize: 5, Target: TargetSoft, Classes: c, Shuffle: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for {
			b, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for r := range b.Rows {
				row := int(b.RowIDs[r])
				for k := range c {
					if b.Target[r*c+k] != float32(f.SoftTargetC[row*c+k]) {
						t.Fatalf("row %d class %d: %v, want %v", row, k, b.Target[r*c+k], f.SoftTargetC[row*c+k])
					}
				}
			}
		}
	})
	t.Run("bags", func(t *testing.T) {
		f := mcReleaseFrames(c)["llp_geom"]
		// Bag 1 releases noisy proportions summing above 1: class 0 is
		// negative and stays so.
		for i := 4; i < 8; i++ {
			copy(f.AlphaC[i*(c-1):], []float64{0.75, 0.5, 0})
			copy(f.AlphaDebiasedC[i*(c-1):], []float64{0.75, 0.5, -0.0625})
		}
		for _, tc := range []struct {
			target Target
			col    []float64
		}{{TargetAlpha, f.AlphaC}, {TargetAlphaDebiased, f.AlphaDebiasedC}} {
			s, err := NewBatchSource(f, BatchOptions{BatchSize: 8, BagSize: 4, Target: tc.target, Classes: c, Shuffle: true, Seed: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.target) != 3*c {
				t.Fatalf("the source holds %d target values for 3 bags of %d classes", len(s.target), c)
			}
			bags := 0
			for {
				b, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if b.TargetWidth != c || len(b.Target) != b.Rows/4*c {
					t.Fatalf("%d targets for %d bags", len(b.Target), b.Rows/4)
				}
				for k := range b.Rows / 4 {
					row := int(b.RowIDs[k*4])
					alpha := tc.col[row*(c-1) : (row+1)*(c-1)]
					want := []float32{float32(1 - (alpha[0] + alpha[1] + alpha[2])), float32(alpha[0]), float32(alpha[1]), float32(alpha[2])}
					if !slices.Equal(b.Target[k*c:(k+1)*c], want) {
						t.Fatalf("%s bag %d: %v, want %v", tc.target, f.BagID[row], b.Target[k*c:(k+1)*c], want)
					}
					if f.BagID[row] == 1 && (want[0] != -0.25 && tc.target == TargetAlpha || want[0] != -0.1875 && tc.target == TargetAlphaDebiased) {
						t.Fatalf("bag 1's class 0: %v", want[0])
					}
					bags++
				}
			}
			if bags != 3 {
				t.Fatalf("%d bags an epoch", bags)
			}
		}
		// A member whose vector differs from its bag's: a BagError.
		f.AlphaC[5*(c-1)+2] = 0.25
		_, err := NewBatchSource(f, BatchOptions{BatchSize: 4, BagSize: 4, Target: TargetAlpha, Classes: c})
		var be *BagError
		if !errors.As(err, &be) || be.Bag != 1 || be.Row != 5 {
			t.Fatalf("err = %v, want a BagError for bag 1 row 5", err)
		}
	})
	t.Run("features only", func(t *testing.T) {
		s, err := NewBatchSource(mcFrame(5, 1, c), BatchOptions{BatchSize: 5, Classes: 7})
		if err != nil {
			t.Fatal(err)
		}
		if b, err := s.Next(); err != nil || b.TargetWidth != 0 || len(b.Target) != 0 {
			t.Fatalf("prediction batch: %v width %d targets %d", err, b.TargetWidth, len(b.Target))
		}
	})
}

// Slice and Take keep every per-class column row-aligned.
func TestMulticlassSliceTake(t *testing.T) {
	for name, f := range mcReleaseFrames(5) {
		for _, g := range []*Frame{f.Slice(3, 9), f.Take([]int{8, 3, 4, 5, 6, 7})} {
			if err := g.Validate(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		a, b := f.Slice(3, 9), f.Take([]int{3, 4, 5, 6, 7, 8})
		if err := framesEqual(a, b); err != nil || a.Classes != 5 || b.Classes != 5 {
			t.Fatalf("%s: Slice and Take differ: %v", name, err)
		}
	}
}

// writeRecord writes one record batch of cols under schema s as an Arrow
// IPC file.
func writeRecord(path string, s *arrow.Schema, cols []arrow.Array, rows int64) error {
	rec := array.NewRecordBatch(s, cols, rows)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(s))
	if err != nil {
		return err
	}
	if err := w.Write(rec); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
