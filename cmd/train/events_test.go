package main

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"labelprivacy/data"
	"labelprivacy/pipeline"
)

// A progress line is cut to the terminal's width (a wrapped line would
// leave stale copies behind on every redraw) and says the epoch, step,
// ex/s and the ETAs of the group and of the sweep.
func TestProgressLine(t *testing.T) {
	p := pipeline.Progress{Stage: "fit", What: "8 models of rr_eps1,rr_eps2", Epoch: 2, Epochs: 4, Step: 120, Steps: 480,
		ExamplesPerS: 41234, Loss: 0.4321, ETA: 95 * time.Second, UnitsDone: 3, Units: 20, TotalETA: 3 * time.Hour}
	line := formatProgress(p)
	for _, want := range []string{"epoch 2/4", "step 120/480", "41234 ex/s", "ETA 1m35s", "3/20 done", "all ETA 3h0m0s"} {
		if !strings.Contains(line, want) {
			t.Fatalf("%q lacks %q", line, want)
		}
	}
	for _, w := range []int{10, 40, len(line) + 5} {
		got := truncateRunes(line, w)
		if n := utf8.RuneCountInString(got); n > w {
			t.Fatalf("width %d: %d runes", w, n)
		}
		if w < utf8.RuneCountInString(line) && !strings.HasSuffix(got, "…") {
			t.Fatalf("width %d: a cut line should end in …: %q", w, got)
		}
	}
	if got := truncateRunes("εεεεε", 3); got != "εε…" {
		t.Fatalf("cut by runes, not bytes: %q", got)
	}
}

// Import progress shows a percentage and an ETA from the position in the
// input once its size is known.
func TestImportStatus(t *testing.T) {
	s := importStatus("libsvm", importProgress(250, 1000), 10*time.Second)
	if !strings.Contains(s, "25.0%") || !strings.Contains(s, "ETA 30s") {
		t.Fatalf("%q", s)
	}
	if s := importStatus("higgs", importProgress(250, 0), time.Second); strings.Contains(s, "%") {
		t.Fatalf("unknown size: %q", s)
	}
}

func importProgress(pos, size int64) data.ImportProgress {
	return data.ImportProgress{Rows: 1000, Bytes: 5e6, InputPos: pos, InputSize: size}
}
