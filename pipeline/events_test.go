package pipeline

import (
	"strings"
	"testing"
	"time"

	"labelprivacy/data"
)

// Import progress shows a percentage and an ETA from the position in the
// input once its size is known, and renders as the import's status line.
func TestImportStatus(t *testing.T) {
	s := importStatus("libsvm", importProgress(250, 1000), 10*time.Second)
	if !strings.Contains(s, "25.0%") || !strings.Contains(s, "ETA 30s") {
		t.Fatalf("%q", s)
	}
	if s := importStatus("higgs", importProgress(250, 0), time.Second); strings.Contains(s, "%") {
		t.Fatalf("unknown size: %q", s)
	}
	if got := (Progress{Stage: "import", What: "higgs: 5 rows"}).String(); got != "import higgs: 5 rows" {
		t.Fatalf("status line %q", got)
	}
}

func importProgress(pos, size int64) data.ImportProgress {
	return data.ImportProgress{Rows: 1000, Bytes: 5e6, InputPos: pos, InputSize: size}
}
