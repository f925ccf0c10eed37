package pipeline

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/report"
)

// Revision is the VCS revision the running binary was built from: the
// first 12 hex digits of vcs.revision, with "+modified" when the tree had
// uncommitted changes; "" when the build recorded none (go run, go test,
// -buildvcs=false).
func Revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return revisionOf(bi.Settings)
}

// VersionLine is what `train version` prints: Version, and the revision
// or, when the build recorded none, why (report.NoRevision).
func VersionLine() string { return versionLine(Revision()) }

func versionLine(rev string) string {
	if rev != "" {
		return Version + " (revision " + rev + ")"
	}
	return Version + ", " + report.NoRevision
}

func revisionOf(settings []debug.BuildSetting) string {
	var rev string
	var modified bool
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && modified {
		rev += "+modified"
	}
	return rev
}

// provenance is what made the session's results: the tool, its revision,
// when the command started, how it was invoked and the config in a line.
func (s *Session) provenance() report.Provenance {
	inv := s.cfg.Invocation
	return report.Provenance{Tool: Version, Revision: Revision(), Started: s.started.Format(time.RFC3339),
		Command: inv.Command, Env: inv.Env, ConfigFile: inv.ConfigFile, ConfigSummary: s.configSummary()}
}

// configSummary describes the session's config in one line: name and id,
// model, training protocol, grid and data.
func (s *Session) configSummary() string {
	c := s.cfg
	model := c.Model.Kind.String()
	if len(c.Model.Hidden) > 0 && c.Model.Kind.String() == "mlp" {
		model += " " + intList(c.Model.Hidden)
	}
	lrs := make([]string, len(c.Train.LearningRates))
	for i, lr := range c.Train.LearningRates {
		lrs[i] = strconv.FormatFloat(lr, 'g', -1, 64)
	}
	parts := []string{
		fmt.Sprintf("config %q (%s)", c.Name, s.configID),
		"model " + model,
		fmt.Sprintf("%s, batch %d, lr %s, %s", english.Count(c.Train.Epochs, "epoch"), c.Train.BatchSize, strings.Join(lrs, "/"), english.Count(c.Train.Trials, "trial")),
		fmt.Sprintf("%s = %s", english.Count(len(s.settings), "setting"), english.Count(len(s.runs), "run")),
		"data " + dataSummary(c, s.dataset.Meta) + " (" + s.datasetID + ")",
		"backend " + c.Backend.String(),
	}
	return strings.Join(parts, "; ")
}

// dataSummary names the dataset: synthetic kind and size, or its
// directory and source.
func dataSummary(c *config.Config, m *data.Meta) string {
	var shape string
	if m != nil {
		shape = fmt.Sprintf("%d train + %d test rows × %d features", m.TrainRows, m.TestRows, len(m.Features))
	}
	if c.Data.Path == "" {
		return fmt.Sprintf("synthetic %s, %s", c.Data.Synth.Kind, shape)
	}
	src := ""
	if m != nil && m.Source != "" {
		src = m.Source + ", "
	}
	return fmt.Sprintf("%s (%s%s)", c.Data.Path, src, shape)
}

func intList(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
