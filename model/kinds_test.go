package model

import (
	"strings"
	"testing"
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
	for _, k := range Kinds() {
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
		{"mse", 0, false, true},
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
	for _, l := range Losses() {
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
			if !XLAAvailable && strings.HasPrefix(tc.name, "xla:") {
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
