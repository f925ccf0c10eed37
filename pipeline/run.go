package pipeline

import (
	"context"
	"errors"

	"labelprivacy/report"
)

// withSession opens a session, runs fn and closes it.
func withSession(ctx context.Context, cfg *Config, access Access, ev Events, fn func(*Session) error) error {
	s, err := Open(ctx, cfg, access, ev)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

// Run runs every stage for cfg — data, releases, fit, audit, report —
// holding the output exclusively.
func Run(ctx context.Context, cfg *Config, ev Events) error {
	return withSession(ctx, cfg, Exclusive, ev, func(s *Session) error {
		runs, err := fitAndTable(ctx, s)
		if err != nil {
			return err
		}
		return auditAndReport(ctx, s, runs)
	})
}

// FitAll is `train fit`: releases, training of the whole grid,
// runs.csv/.parquet and the summary (without audit).
func FitAll(ctx context.Context, cfg *Config, ev Events) error {
	return withSession(ctx, cfg, Exclusive, ev, func(s *Session) error {
		runs, err := fitAndTable(ctx, s)
		if err != nil {
			return err
		}
		_, err = Report(s, runs, nil, nil)
		return err
	})
}

// AuditAll is `train audit`: the audit of every setting from the stored
// results of a finished fit or sweep, and the report.
func AuditAll(ctx context.Context, cfg *Config, ev Events) error {
	return withSession(ctx, cfg, Exclusive, ev, func(s *Session) error {
		runs, err := Finished(s)
		if err != nil {
			return err
		}
		return auditAndReport(ctx, s, runs)
	})
}

// Sweep trains one shard of the grid (groups j ≡ shard.I mod shard.N),
// skipping finished runs and recording failures; shards share the output.
func Sweep(ctx context.Context, cfg *Config, shard Shard, ev Events) error {
	return withSession(ctx, cfg, Shared, ev, func(s *Session) error {
		_, err := Fit(ctx, s, FitOptions{Shard: shard, KeepGoing: true})
		return err
	})
}

func fitAndTable(ctx context.Context, s *Session) ([]report.Run, error) {
	runs, err := Fit(ctx, s, FitOptions{})
	if err != nil {
		return nil, err
	}
	return runs, WriteRunTables(s, runs)
}

func auditAndReport(ctx context.Context, s *Session, runs []report.Run) error {
	audits, post, err := Audit(ctx, s, runs)
	if err != nil {
		return err
	}
	_, err = Report(s, runs, audits, post)
	return err
}

// Finished reads the stored results of the grid's finished runs; a
// damaged record is left out with a notice (fit or sweep trains it again).
func Finished(s *Session) ([]report.Run, error) {
	st := Store{Dir: s.Cfg.Output}
	var out []report.Run
	for _, r := range s.Runs {
		res, err := st.Result(r.ID)
		var d *DamagedRecordError
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
