package report

import "labelprivacy/data"

// Internal fixtures and readers for the external tests (package
// report_test), which cannot be part of package report: they share
// fixtures with report/figures through report/internal/reporttest, which
// imports report.
var (
	FullRun     = fullRun
	FullAudit   = fullAudit
	FullModel   = fullModelAttack
	RoundTrip   = roundTrip
	ColumnNames = columnNames
)

// ReadSummaryRows reads SummaryTable's rows back (the summary has no
// public reader: nothing reads summary.csv back but tests).
func ReadSummaryRows(t *data.Table) ([]Row, error) { return summarySchema.fromTable(t) }
