package pipeline

import (
	"context"
	"errors"
	"fmt"

	"labelprivacy/config"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/report"
)

// withSession opens a session, runs fn and closes it.
func withSession(ctx context.Context, cfg *config.Config, access Access, ev Events, fn func(*Session) error) error {
	return withSessionOf(ctx, cfg, ev, openOptions{access: access}, fn)
}

// withSessionOf is withSession of a session opened with o (light: one that
// never trains; audit: one that audits).
func withSessionOf(ctx context.Context, cfg *config.Config, ev Events, o openOptions, fn func(*Session) error) error {
	s, err := open(ctx, cfg, ev, o)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

// Stages selects what Run does after opening the session (data, grid,
// output lock); it always ends with the report.
type Stages uint8

const (
	// StageFit makes the releases and trains every missing run of the
	// grid, then writes runs.csv/.parquet.
	StageFit Stages = 1 << iota
	// StageAudit audits every setting (Section 3) with the finished runs
	// (those StageFit just trained, or the stored results of an earlier
	// fit or sweep).
	StageAudit
	// StageAll is `train run`: fit, audit and report.
	StageAll = StageFit | StageAudit
)

// Run opens a session for cfg holding the output exclusively, runs the
// selected stages and writes the report: `train run` (StageAll), `train
// fit` (StageFit: no audit) and `train audit` (StageAudit, after a fit or a
// sweep).
func Run(ctx context.Context, cfg *config.Config, ev Events, stages Stages) error {
	if stages&StageAll == 0 {
		return fmt.Errorf("pipeline: Run: no stage selected")
	}
	// Without fit, nothing trains: the training features stay on disk (the
	// audit's η from k nearest neighbours reads its rows itself).
	// Canaries through training (audit.model_canaries) train in the audit.
	light := stages&StageFit == 0 && (stages&StageAudit == 0 || cfg.Audit.ModelCanaries == 0)
	o := openOptions{access: Exclusive, light: light, audit: stages&StageAudit != 0}
	return withSessionOf(ctx, cfg, ev, o, func(s *Session) error {
		var runs []report.Run
		var err error
		if stages&StageFit != 0 {
			if runs, err = Fit(ctx, s, FitOptions{}); err != nil {
				return err
			}
			if err := writeRunTables(s, runs); err != nil {
				return err
			}
		} else if runs, err = finishedRuns(s); err != nil {
			return err
		}
		var audited *Audited
		if stages&StageAudit != 0 {
			if audited, err = Audit(ctx, s, runs); err != nil {
				return err
			}
		}
		_, err = Report(s, runs, audited)
		return err
	})
}

// Sweep trains one shard of the grid (groups j ≡ shard.I mod shard.N),
// skipping finished runs and recording failures; shards share the output.
func Sweep(ctx context.Context, cfg *config.Config, shard Shard, ev Events) error {
	return withSession(ctx, cfg, Shared, ev, func(s *Session) error {
		_, err := Fit(ctx, s, FitOptions{Shard: shard, KeepGoing: true})
		return err
	})
}

// finishedRuns reads the stored results of the grid's finished runs; a
// damaged record is left out with a notice (fit or sweep trains it again).
func finishedRuns(s *Session) ([]report.Run, error) {
	st := store.Store{Dir: s.cfg.Output}
	var out []report.Run
	for _, r := range s.runs {
		res, err := st.Result(r.ID)
		var d *store.DamagedRecordError
		if errors.As(err, &d) {
			s.ev.Warn("results", d.Error()+": left out (train fit or sweep trains the run again)")
			continue
		}
		if err != nil {
			return nil, err
		}
		if res != nil {
			out = append(out, *res)
		}
	}
	return out, nil
}
