package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// key=value arguments are --set overrides (Hydra's habit), after the --set
// flags, on every command that takes --set, the bare quickstart included;
// any other argument is refused naming both forms.
func TestKeyValueArguments(t *testing.T) {
	t.Chdir(t.TempDir()) // the quickstart's output, should a case run it
	cfg := writeSweepConfig(t, filepath.Join(t.TempDir(), "out"), "cluster: {binary: /opt/bin/train}\n")
	cases := []struct {
		name string
		args []string
		out  []string // in stdout, in this order
		err  []string // in the error ("" : none)
	}{
		{"emit carries them as --set, after the flags", []string{"sweep", "emit", "slurm", "-c", cfg, "--set", "train.epochs=2", "train.trials=3", "model.hidden=[8]"},
			[]string{"'--set' 'train.epochs=2' '--set' 'train.trials=3' '--set' 'model.hidden=[8]'"}, nil},
		{"a bad key is named as --set's is", []string{"fit", "-c", cfg, "train.epoch=3"}, nil, []string{"--set train.epoch", "did you mean train.epochs?"}},
		{"a bad value too", []string{"fit", "-c", cfg, "train.epochs=0"}, nil, []string{"--set train.epochs", "train.epochs"}},
		{"the bare quickstart takes them", []string{"train.epoch=3"}, nil, []string{"did you mean train.epochs?"}},
		{"another argument names --set", []string{"run", "-c", cfg, "epochs"}, nil,
			[]string{`unknown argument "epochs" for "train run"`, "key=value or --set key=value"}},
		{"a mistyped subcommand is suggested", []string{"sweep", "statu", "-c", cfg}, nil,
			[]string{`unknown command "statu" for "train sweep"`, "--set key=value", "Did you mean this?\n\tstatus"}},
		{"an unknown command", []string{"frobnicate"}, nil, []string{`unknown command "frobnicate" for "train"`, "--set key=value"}},
		{"a path is no override", []string{"run", "-c", cfg, "a/b=c"}, nil, []string{`unknown argument "a/b=c"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := cli(t, nil, tc.args...)
			if tc.err == nil && err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.err {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("%q: err = %v, want %q in it", tc.args, err, want)
				}
			}
			for _, want := range tc.out {
				if !strings.Contains(out, want) {
					t.Fatalf("%q: output lacks %q:\n%s", tc.args, want, out)
				}
			}
		})
	}
}
