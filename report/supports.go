package report

import (
	"errors"
	"strings"

	"labelprivacy/pets"
)

// Supports says whether the report shows a kind with the spec sp
// (pets.Serve, asked by pets.Register): nil, or a sentence saying what it
// cannot show. Its tables print the display name and the plain words of
// Look in report.md's Markdown tables and in CSV cells, so they hold no
// '|' and no line break. (The figures' markers are report/figures'.)
func Supports(sp pets.Spec) error {
	for _, s := range []string{sp.Look.Name, sp.Look.Plain} {
		if strings.ContainsAny(s, "|\n\r") {
			return errors.New("its display name or plain words hold a '|' or a line break, which would cut report.md's tables")
		}
	}
	return nil
}

var _ = pets.Serve("report", Supports)
