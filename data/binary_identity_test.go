package data

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"math"
	"path/filepath"
	"testing"
)

// Binary data stays byte for byte what it was before labels could have C
// classes: the files Synth and the importers write (and their meta.json),
// release-shaped frames of every binary column, and every batch the batch
// source yields. testdata/binary_identity.golden.json holds the SHA-256 of
// each, recorded with the code as it was before multiclass support (rerun
// with -update only when a change of binary bytes is intended).
func TestBinaryBytesUnchanged(t *testing.T) {
	got := map[string]string{}
	dir := t.TempDir()
	ctx := context.Background()
	fileSum := func(p string) string {
		s, err := FileSHA256(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Synthetic datasets: the files and meta.json as written.
	for _, kind := range []SynthKind{SynthLogistic, SynthBeta, SynthUniform} {
		out := filepath.Join(dir, "synth-"+kind.String())
		if _, err := Synth(ctx, SynthOptions{Kind: kind, Rows: 3000, TestRows: 400, Features: 4, Seed: 11, Groups: 3, Out: out}); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{TrainFile, TestFile, MetaFile} {
			got["synth/"+kind.String()+"/"+f] = fileSum(filepath.Join(out, f))
		}
	}
	// Imports: the files, and meta.json without the input path (a temporary
	// directory's name).
	metaSum := func(out string) string {
		m, err := ReadMeta(out)
		if err != nil {
			t.Fatal(err)
		}
		m.Input = ""
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}
	higgs := writeFile(t, dir, "higgs.csv", higgsCSV(500, 3))
	out := filepath.Join(dir, "higgs")
	if _, err := ImportHiggs(ctx, ImportOptions{In: higgs, Out: out, TestRows: 100}); err != nil {
		t.Fatal(err)
	}
	got["higgs/"+TrainFile], got["higgs/"+TestFile], got["higgs/"+MetaFile] =
		fileSum(filepath.Join(out, TrainFile)), fileSum(filepath.Join(out, TestFile)), metaSum(out)
	kdd := writeFile(t, dir, "kdd.train", mustRead(t, "testdata/kdd_small.libsvm"))
	kddTest := writeFile(t, dir, "kdd.test", []byte("1 5:1 6:0.5\n-1 2:1\n"))
	out = filepath.Join(dir, "kdd")
	if _, err := ImportLibSVM(ctx, ImportOptions{In: kdd, TestIn: kddTest, Out: out, HashBuckets: 1000}); err != nil {
		t.Fatal(err)
	}
	got["libsvm/"+TrainFile], got["libsvm/"+TestFile], got["libsvm/"+MetaFile] =
		fileSum(filepath.Join(out, TrainFile)), fileSum(filepath.Join(out, TestFile)), metaSum(out)

	// Release-shaped frames of every binary column.
	for name, f := range binaryReleaseFrames() {
		s, err := FrameSHA256(f, map[string]string{"mechanism": name})
		if err != nil {
			t.Fatal(err)
		}
		got["frame/"+name] = s
	}

	// Batches: the same with Classes 0 (as before) and 2, and a binary
	// batch says TargetWidth 0.
	for name, c := range binaryBatchCases() {
		var sums [2]string
		for k, classes := range []int{0, 2} {
			o := c.o
			o.Classes = classes
			s, err := NewBatchSource(c.f, o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			h := sha256.New()
			for e := range uint64(2) {
				s.SeekEpoch(e)
				for {
					b, err := s.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if b.TargetWidth != 0 {
						t.Fatalf("%s: a binary batch has TargetWidth %d", name, b.TargetWidth)
					}
					hashBatch(h, b)
				}
			}
			sums[k] = hex.EncodeToString(h.Sum(nil))
		}
		if sums[0] != sums[1] {
			t.Errorf("%s: Classes 2 gives other batches than Classes 0", name)
		}
		got["batch/"+name] = sums[0]
	}
	// A binary frame with Classes 2 set writes the bytes of one without.
	for name, f := range binaryReleaseFrames() {
		g := *f
		g.Classes = 2
		if s, err := FrameSHA256(&g, map[string]string{"mechanism": name}); err != nil || s != got["frame/"+name] {
			t.Errorf("%s: Classes 2 changes the file (%v)", name, err)
		}
	}
	golden(t, "binary_identity.golden.json", got)
}

// binaryReleaseFrames are frames shaped like each binary release (and the
// in-memory soft targets), with features.
func binaryReleaseFrames() map[string]*Frame {
	base := func() *Frame {
		f := testFrame(12, 3)
		f.Label = nil
		return f
	}
	rr := base()
	rr.LabelRR = []uint8{1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1}
	llp := base()
	llp.BagID = []int64{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}
	llp.Alpha = []float64{0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0.5, 1, 1, 1, 1}
	llp.AlphaDebiased = []float64{0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0.5, 1.0625, 1.0625, 1.0625, 1.0625}
	prior := base()
	prior.LabelRR = rr.LabelRR
	prior.Prior = []float64{0.5, 0.5, 0.5, 0.5, 0.1, 0.9, 0.3, 0.7, 0.05, 0.95, 0.6, 0.4}
	prior.Branch = []uint8{0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0}
	prior.Stage = []uint8{1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}
	sim := &Frame{Rows: 12, LabelRR: rr.LabelRR, Row: []int64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}}
	soft := base()
	soft.SoftTarget = []float64{0.1, 0.9, -0.2, 1.3, 0.5, 0.5, 0, 1, 0.25, 0.75, 0.4, 0.6}
	return map[string]*Frame{"rr": rr, "llp_geom": llp, "rr_prior": prior, "simulation": sim, "soft": soft, "labelled": testFrame(12, 3)}
}

type batchCase struct {
	f *Frame
	o BatchOptions
}

// binaryBatchCases covers every binary target, bags, sparse rows, shuffling,
// features by row and index-only batches.
func binaryBatchCases() map[string]batchCase {
	fr := binaryReleaseFrames()
	sparse := &Frame{Rows: 5, Label: []uint8{1, 0, 1, 1, 0}, Indices: []uint32{4, 9, 2, 7, 7, 1, 3, 3, 8}, Offsets: []int64{0, 2, 3, 6, 6, 9}}
	feat := testFrame(10, 2).FeaturesOnly()
	return map[string]batchCase{
		"label":         {testFrame(37, 3), BatchOptions{BatchSize: 8, Target: TargetLabel}},
		"label shuffle": {testFrame(37, 3), BatchOptions{BatchSize: 8, Target: TargetLabel, Shuffle: true, Seed: 5, DropLast: true}},
		"label_rr":      {fr["rr"], BatchOptions{BatchSize: 5, Target: TargetLabelRR, Shuffle: true, Seed: 2}},
		"soft":          {fr["soft"], BatchOptions{BatchSize: 5, Target: TargetSoft, Shuffle: true, Seed: 3}},
		"alpha":         {fr["llp_geom"], BatchOptions{BatchSize: 8, BagSize: 4, Target: TargetAlpha, Shuffle: true, Seed: 7}},
		"debiased":      {fr["llp_geom"], BatchOptions{BatchSize: 4, BagSize: 4, Target: TargetAlphaDebiased}},
		"bags skipped":  {bagFrame(), BatchOptions{BatchSize: 6, BagSize: 3, Target: TargetAlpha, Shuffle: true, Seed: 4}},
		"sparse":        {sparse, BatchOptions{BatchSize: 2, Target: TargetLabel, Shuffle: true, Seed: 1}},
		"sparse wide":   {sparse, BatchOptions{BatchSize: 3, Target: TargetLabel, Width: 5}},
		"by row":        {fr["simulation"], BatchOptions{BatchSize: 5, Target: TargetLabelRR, Features: feat, Shuffle: true, Seed: 8}},
		"index only":    {fr["simulation"], BatchOptions{BatchSize: 5, Target: TargetLabelRR, Features: feat, IndexOnly: true}},
		"predict":       {testFrame(9, 2), BatchOptions{BatchSize: 4}},
	}
}

// hashBatch feeds every field of b into h (floats by bit pattern).
func hashBatch(h hash.Hash, b *Batch) {
	w := func(v ...int64) {
		for _, x := range v {
			binary.Write(h, binary.LittleEndian, x)
		}
	}
	w(int64(b.Rows), int64(b.Dim), int64(b.Width), int64(b.BagSize), int64(len(b.RowIDs)), int64(len(b.X)),
		int64(len(b.Indices)), int64(len(b.IndexMask)), int64(len(b.Target)))
	for _, v := range b.RowIDs {
		w(int64(v))
	}
	for _, v := range b.X {
		w(int64(math.Float32bits(v)))
	}
	for _, v := range b.Indices {
		w(int64(v))
	}
	for _, v := range b.IndexMask {
		w(int64(math.Float32bits(v)))
	}
	for _, v := range b.Target {
		w(int64(math.Float32bits(v)))
	}
}
