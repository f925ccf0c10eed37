package model

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"labelprivacy/sgemm"
	"labelprivacy/sgemm/simplegofast"
)

func TestParseKind(t *testing.T) {
	tests := []struct {
		in      string
		want    Kind
		wantErr bool
	}{
		{"mlp", KindMLP, false},
		{"higgs_mlp", KindHiggsMLP, false},
		{" KDD_Embed ", KindKDDEmbed, false},
		{"cnn", 0, true},
		{"", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseKind(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseKind(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
	for _, k := range kinds.Values() {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Fatalf("round trip of %v: %v, %v", k, back, err)
		}
	}
}

func TestParseLoss(t *testing.T) {
	tests := []struct {
		in      string
		want    Loss
		perBag  bool
		wantErr bool
	}{
		{"bce", LossBCE, false, false},
		{"debiased_bce", LossDebiasedBCE, false, false},
		{"PropMatch", LossPropMatch, true, false},
		{"easyllp", LossEasyLLP, true, false},
		{"mse", LossMSE, false, false},
		{"bag_mse", LossBagMSE, true, false},
		{"huber", 0, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseLoss(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseLoss(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.wantErr)
			}
			if err == nil && got.PerBag() != tc.perBag {
				t.Fatalf("%v.PerBag() = %v", got, got.PerBag())
			}
		})
	}
	for _, l := range losses.Values() {
		b, _ := l.MarshalText()
		var back Loss
		if err := back.UnmarshalText(b); err != nil || back != l {
			t.Fatalf("round trip of %v: %v, %v", l, back, err)
		}
	}
}

func TestNewBackend(t *testing.T) {
	tests := []struct {
		name    string
		wantErr []string // substrings of the error; nil means success
		skipOK  bool     // success is acceptable (a plugin may be installed)
	}{
		{name: "go"},
		{name: ""},
		{name: "go:ops_sequential"},
		{name: "go:matmul=simplego"},
		{name: "go:parallelism=1,matmul=auto"},
		{name: "go:matmul=fast", wantErr: []string{"matmul", `"fast"`, "avx512", "avx2", "simplego"}},
		{name: "tpu", wantErr: []string{"unknown backend"}},
		{name: "xla", wantErr: []string{"xla:cpu"}},
		{name: "xla:cuda", wantErr: []string{`"go"`}, skipOK: true},
		{name: "xla:nosuchplugin", wantErr: []string{"PJRT_PLUGIN_LIBRARY_PATH", `"go"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBackend(tc.name)
			if tc.wantErr == nil || (tc.skipOK && err == nil) {
				if err != nil {
					t.Fatal(err)
				}
				b.Finalize()
				return
			}
			if err == nil {
				b.Finalize()
				t.Fatalf("NewBackend(%q) succeeded, want an error", tc.name)
			}
			want := tc.wantErr
			if !xlaAvailable && strings.HasPrefix(tc.name, "xla:") {
				want = []string{"without the XLA backend", `"go"`}
			}
			for _, s := range want {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not mention %q", err, s)
				}
			}
			t.Logf("%s: %v", tc.name, err)
		})
	}
}

func TestParseInitAndResident(t *testing.T) {
	for _, i := range inits.Values() {
		b, err := i.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Init
		if err := back.UnmarshalText(b); err != nil || back != i {
			t.Fatalf("round trip of %v: %v, %v", i, back, err)
		}
	}
	var got Init
	if err := got.UnmarshalText([]byte(" He_Normal ")); err != nil || got != InitHeNormal {
		t.Fatalf("Init.UnmarshalText: %v, %v", got, err)
	}
	if err := got.UnmarshalText([]byte("xavier")); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "uniform_fan_in") {
		t.Fatalf("Init.UnmarshalText(xavier): %v", err)
	}
	if _, err := Init(0).MarshalText(); err == nil {
		t.Fatal("Init(0) marshalled")
	}
	if m, _ := (ModelConfig{Kind: KindMLP, InputDim: 3}).WithDefaults(); m.Init != DefaultInit || DefaultInit != InitUniformFanIn {
		t.Fatalf("default init %v", m.Init)
	}
	for _, s := range []string{"auto", "always", "never"} {
		var m ResidentMode
		if err := m.UnmarshalText([]byte(s)); err != nil || m.String() != s {
			t.Fatalf("ResidentMode.UnmarshalText(%q) = %v, %v", s, m, err)
		}
	}
}

func TestParseInterval(t *testing.T) {
	tests := []struct {
		in      string
		want    Interval
		wantErr bool
	}{
		{"10m", Interval{Every: 10 * time.Minute}, false},
		{"90s", Interval{Every: 90 * time.Second}, false},
		{"500", Interval{Steps: 500}, false},
		{" 500steps ", Interval{Steps: 500}, false},
		{"0", Interval{}, true},
		{"-5m", Interval{}, true},
		{"soon", Interval{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseInterval(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseInterval(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.wantErr)
			}
			if err == nil {
				var back Interval
				b, _ := got.MarshalText()
				if err := back.UnmarshalText(b); err != nil || back != got {
					t.Fatalf("round trip %q: %v, %v", b, back, err)
				}
			}
		})
	}
}

func TestBackendEnv(t *testing.T) {
	before := os.Environ()
	if env := BackendEnv("xla:cuda"); env[CUDAChecksEnv] != "0" {
		t.Fatalf("BackendEnv(xla:cuda) = %v", env)
	}
	if env := BackendEnv("go"); env != nil {
		t.Fatalf("BackendEnv(go) = %v", env)
	}
	if b, err := NewBackend("xla:nosuchplugin"); err == nil {
		b.Finalize()
	}
	if after := os.Environ(); !slices.Equal(before, after) {
		t.Fatal("NewBackend changed the process environment")
	}
}

// TestMatmul: which matrix product backend go runs, as NewBackend makes it
// and as MatmulPath predicts it (the run record's matmul column), and the
// options simplego receives.
func TestMatmul(t *testing.T) {
	best := MatmulSimplego // what auto picks
	switch {
	case sgemm.HasAVX512():
		best = MatmulAVX512
	case sgemm.HasAVX2():
		best = MatmulAVX2
	}
	cases := []struct {
		name, want, sgOpts string
	}{
		{"go", best, DefaultGoOptions},
		{"", best, DefaultGoOptions},
		{"go:matmul=simplego", MatmulSimplego, DefaultGoOptions},
		{"go:matmul=auto", best, DefaultGoOptions},
		{"go:ops_parallel,matmul=simplego", MatmulSimplego, "ops_parallel"},
		{"go:parallelism=1", best, "parallelism=1"},
	}
	if sgemm.HasAVX2() {
		cases = append(cases, struct{ name, want, sgOpts string }{"go:matmul=avx2", MatmulAVX2, DefaultGoOptions})
	}
	if sgemm.HasAVX512() {
		cases = append(cases, struct{ name, want, sgOpts string }{"go:parallelism=2,matmul=avx512", MatmulAVX512, "parallelism=2"})
	}
	for _, tc := range cases {
		b, err := NewBackend(tc.name)
		if err != nil {
			t.Fatalf("%q: %v", tc.name, err)
		}
		if got := Matmul(b); got != tc.want {
			t.Errorf("Matmul(NewBackend(%q)) = %q, want %q", tc.name, got, tc.want)
		}
		if got := mustParseBackend(t, tc.name).Matmul(); got != tc.want {
			t.Errorf("MatmulPath(%q) = %q, want %q", tc.name, got, tc.want)
		}
		b.Finalize()
		_, opts, has := strings.Cut(tc.name, ":")
		if got, _, err := goOptions(opts, has); err != nil || got != tc.sgOpts {
			t.Errorf("%q: simplego options %q (%v), want %q", tc.name, got, err, tc.sgOpts)
		}
	}
	if got := mustParseBackend(t, "xla:cuda").Matmul(); got != MatmulXLA {
		t.Errorf("Matmul of xla:cuda = %q", got)
	}
	if _, err := ParseBackend("go:matmul=fast"); err == nil {
		t.Errorf("a bad matmul option parsed")
	}
	if sgemm.HasAVX2() {
		// The test backend (group invariance, determinism, …) runs on sgemm.
		if got := Matmul(goBackend(t)); got != best && os.Getenv("MODEL_TEST_BACKEND") == "" {
			t.Errorf("the tests' backend runs %q", got)
		}
		if note := MatmulNote(); note != "" {
			t.Errorf("MatmulNote on an AVX2 machine: %q", note)
		}
		if msg := FallbackNotice(goBackend(t)); msg != "" {
			t.Errorf("FallbackNotice for a backend on sgemm: %q", msg)
		}
	} else if _, err := NewBackend("go:matmul=avx2"); err == nil {
		t.Error("matmul=avx2 accepted without AVX2")
	}
	if !sgemm.HasAVX512() {
		_, err := NewBackend("go:matmul=avx512")
		if err == nil || !strings.Contains(err.Error(), "avx512") {
			t.Errorf("matmul=avx512 without AVX-512: %v, want an error naming it", err)
		}
		if got := mustParseBackend(t, "go:matmul=avx512").Matmul(); got != "" {
			t.Errorf("Matmul of go:matmul=avx512 without AVX-512 = %q, want \"\" (Open fails)", got)
		}
	}
}

// mustParseBackend parses a backend name a test knows to be valid.
func mustParseBackend(t *testing.T, name string) BackendName {
	t.Helper()
	b, err := ParseBackend(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFootprint: the estimate counts the parameters exactly (Params
// equals the sum of the parameter sizes, StateBytes equals StateBytes) and
// does not overflow on absurd shapes.
func TestFootprint(t *testing.T) {
	for _, m := range []ModelConfig{
		{Kind: KindHiggsMLP, InputDim: 28},
		{Kind: KindMLP, InputDim: 10, Hidden: []int{64, 32}},
		{Kind: KindKDDEmbed, Buckets: 1000},
	} {
		m, err := m.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, p := range m.params() {
			n += p.size()
		}
		f := m.Footprint(3, 1024)
		if f.Params != float64(n) || f.StateBytes != float64(m.StateBytes(3)) || f.ActivationBytes <= 0 {
			t.Errorf("%s: Footprint %+v, parameters %d, StateBytes %d", m.Kind, f, n, m.StateBytes(3))
		}
	}
	huge := ModelConfig{Kind: KindMLP, InputDim: 28, Hidden: []int{1e10, 1e10}}
	if f := huge.Footprint(1, 1024); !(f.Bytes() > 1e20) {
		t.Errorf("a 10^20-parameter model is estimated at %g bytes", f.Bytes())
	}
}

// TestFallbackNoticeOnce: a refused hook is said once per process, with
// its reason; an installed one says nothing.
func TestFallbackNoticeOnce(t *testing.T) {
	var o onceNotice
	if msg := o.take(nil); msg != "" {
		t.Errorf("an installed hook says %q", msg)
	}
	refused := fmt.Errorf("%w: self-test failed: element [0,1,2] differs", simplegofast.ErrNotInstalled)
	first := o.take(refused)
	if !strings.Contains(first, "self-test failed: element [0,1,2] differs") || !strings.Contains(first, "25×") ||
		strings.Contains(first, simplegofast.ErrNotInstalled.Error()) {
		t.Errorf("first notice %q", first)
	}
	if again := o.take(refused); again != "" {
		t.Errorf("said twice: %q", again)
	}
}
