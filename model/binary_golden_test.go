package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gomlx/gomlx/backends"
)

var updateGolden = flag.Bool("update", false, "rewrite model/testdata golden files")

const binaryGoldenFile = "testdata/binary_golden.json"

// bitsDigest is the SHA-256 of the float32 bits of vs, in order.
func bitsDigest(vs ...[]float32) string {
	h := sha256.New()
	var b [4]byte
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestBinaryGolden pins binary training to the bits it had before labels
// with C ≥ 3 classes were added: for each case a small group trains (every
// binary loss, host and resident feeds, the sgemm kernel and simplego's own
// products, higgs_mlp and kdd_embed), and the SHA-256 of its trained
// parameters and test predictions must equal the digest recorded in
// testdata/binary_golden.json (go test -run TestBinaryGolden -update
// rewrites it; do so only for a change meant to alter binary training, and
// say so in the commit). One flipped bit anywhere changes the digest.
//
// The digests hold for backend go on amd64 (the kernels' FMA chains are
// fixed, and Go does not fuse float operations on amd64): skipped on other
// backends and architectures.
func TestBinaryGolden(t *testing.T) {
	if runtime.GOARCH != "amd64" || os.Getenv("MODEL_TEST_BACKEND") != "" {
		t.Skip("golden bits are recorded for backend go on amd64")
	}
	const d = 10
	w, b := trueModel(d, 2, 2)
	tr := makeLogistic(1024, w, b, 5)
	te := makeLogistic(300, w, b, 6)
	feat, test := denseFrame(tr.X, d), denseFrame(te.X, d)
	const width, buckets = 4, 64
	sidx, smask, sy := sparseData(1024, width, buckets, 3)
	tidx, tmask, _ := sparseData(200, width, buckets, 4)
	sfeat, stest := sparseFrame(sidx, smask, width), sparseFrame(tidx, tmask, width)

	mlp := ModelConfig{Kind: KindMLP, InputDim: d, Hidden: []int{16, 8}}
	tests := []struct {
		name     string
		backend  string
		model    ModelConfig
		loss     Loss
		bag      int
		resident ResidentMode
		sparse   bool
	}{
		{name: "mlp bce", backend: "go", model: mlp, loss: LossBCE},
		{name: "mlp debiased_bce resident", backend: "go", model: mlp, loss: LossDebiasedBCE, resident: ResidentAlways},
		{name: "mlp propmatch k=4", backend: "go", model: mlp, loss: LossPropMatch, bag: 4},
		{name: "mlp easyllp k=8", backend: "go", model: mlp, loss: LossEasyLLP, bag: 8},
		{name: "logistic debiased_bce", backend: "go", model: ModelConfig{Kind: KindMLP, InputDim: d}, loss: LossDebiasedBCE},
		{name: "higgs_mlp debiased_bce", backend: "go", model: ModelConfig{Kind: KindHiggsMLP, InputDim: d}, loss: LossDebiasedBCE},
		{name: "mlp debiased_bce simplego", backend: "go:matmul=simplego", model: mlp, loss: LossDebiasedBCE},
		{name: "mlp propmatch simplego", backend: "go:matmul=simplego", model: mlp, loss: LossPropMatch, bag: 4},
		{name: "kdd_embed lazy host", backend: "go", model: ModelConfig{Kind: KindKDDEmbed, Buckets: buckets, Hidden: []int{8}},
			loss: LossBCE, sparse: true},
		{name: "kdd_embed dense", backend: "go", model: ModelConfig{Kind: KindKDDEmbed, Buckets: buckets, Hidden: []int{8}},
			loss: LossDebiasedBCE},
	}
	want := map[string]string{}
	if !*updateGolden {
		raw, err := os.ReadFile(binaryGoldenFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	backendsByName := map[string]backends.Backend{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			be := backendsByName[tc.backend]
			if be == nil {
				var err error
				if be, err = NewBackend(tc.backend); err != nil {
					t.Fatal(err)
				}
				backendsByName[tc.backend] = be
			}
			if tc.backend == "go" && !usesSgemm(be) {
				t.Skipf("golden bits are recorded on sgemm's kernels; this machine runs %s", Matmul(be))
			}
			f, tf, y := feat, test, tr.Y
			if tc.model.Kind == KindKDDEmbed {
				f, tf, y = sfeat, stest, sy
			}
			cfg := GroupConfig{Name: "golden", Backend: be, Model: tc.model, Loss: tc.loss, Epochs: 2, Features: f,
				Resident: tc.resident, SparseEmbedding: tc.sparse,
				Replicas: groupReplicas(t, f, y, 3, tc.loss, tc.bag, 128)}
			g := mustTrain(t, cfg)
			var vs [][]float32
			for i := range g.params {
				vs = append(vs, g.paramValues(t, i))
			}
			vs = append(vs, mustPredict(t, g, tf)...)
			got[tc.name] = bitsDigest(vs...)
			if !*updateGolden && got[tc.name] != want[tc.name] {
				t.Errorf("trained bits changed: digest %s, recorded %s", got[tc.name], want[tc.name])
			}
		})
	}
	if *updateGolden {
		raw, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(binaryGoldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(binaryGoldenFile, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
