package pipeline

import (
	"context"

	"labelprivacy/report"
)

// Run runs every stage for cfg — data, releases, fit, audit, report —
// holding the output exclusively.
func Run(ctx context.Context, cfg *Config, ev Events) error {
	s, err := Open(ctx, cfg, Exclusive, ev)
	if err != nil {
		return err
	}
	defer s.Close()
	runs, err := Fit(ctx, s, FitOptions{})
	if err != nil {
		return err
	}
	if err := WriteRunTables(s, runs); err != nil {
		return err
	}
	audits, post, err := Audit(ctx, s, runs)
	if err != nil {
		return err
	}
	_, err = Report(s, runs, audits, post)
	return err
}

// FitAll is the fit stage of `train fit`: releases, training of the whole
// grid, runs.csv/.parquet and the summary (without audit).
func FitAll(ctx context.Context, cfg *Config, ev Events) error {
	s, err := Open(ctx, cfg, Exclusive, ev)
	if err != nil {
		return err
	}
	defer s.Close()
	runs, err := Fit(ctx, s, FitOptions{})
	if err != nil {
		return err
	}
	if err := WriteRunTables(s, runs); err != nil {
		return err
	}
	_, err = Report(s, runs, nil, nil)
	return err
}

// AuditAll is `train audit`: the audit of every setting from the stored
// results of a finished fit or sweep, and the report.
func AuditAll(ctx context.Context, cfg *Config, ev Events) error {
	s, err := Open(ctx, cfg, Exclusive, ev)
	if err != nil {
		return err
	}
	defer s.Close()
	runs, err := Finished(s)
	if err != nil {
		return err
	}
	audits, post, err := Audit(ctx, s, runs)
	if err != nil {
		return err
	}
	_, err = Report(s, runs, audits, post)
	return err
}

// Sweep trains one shard of the grid (groups j ≡ shard.I mod shard.N),
// skipping finished runs and recording failures; shards share the output.
func Sweep(ctx context.Context, cfg *Config, shard Shard, ev Events) error {
	s, err := Open(ctx, cfg, Shared, ev)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = Fit(ctx, s, FitOptions{Shard: shard, KeepGoing: true})
	return err
}

// Finished reads the stored results of the grid's finished runs.
func Finished(s *Session) ([]report.Run, error) {
	st := Store{Dir: s.Cfg.Output}
	var out []report.Run
	for _, r := range s.Runs {
		res, err := st.Result(r.ID)
		if err != nil {
			return nil, err
		}
		if res != nil {
			out = append(out, *res)
		}
	}
	return out, nil
}
