package model

import (
	"slices"
	"time"
)

// checkpointer saves a group's state at step boundaries on the loop's
// behalf: every GroupConfig.CheckpointEvery, when the loop is cancelled,
// and at the end. A save snapshots the state to the host and writes it in
// the background (ckptWriter); the next save, or the end, waits for it. A
// host-kept embedding table is not copied (300 MB for kdd_embed): the save
// writes it from the live table and training waits for the write.
type checkpointer struct {
	dir   string // "": no checkpoints
	every Interval
	w     ckptWriter
	snap  snapshot
	at    int64     // step of the last save, or the one the loop started from
	last  time.Time // time of the last save, or of the loop's start
	saves int
}

func newCheckpointer(t *trainer, step int64) checkpointer {
	return checkpointer{dir: t.cfg.CheckpointDir, every: t.cfg.CheckpointEvery,
		w: ckptWriter{dir: t.cfg.CheckpointDir, fingerprint: t.fp}, at: step}
}

// due reports whether the schedule asks for a save after step.
func (c *checkpointer) due(step int64) bool {
	return c.dir != "" &&
		((c.every.Steps > 0 && step%c.every.Steps == 0) || (c.every.Steps == 0 && time.Since(c.last) >= c.every.Every))
}

// pending reports whether step has state a save would keep (checkpoints
// are on and step is not the last one saved).
func (c *checkpointer) pending(step int64) bool { return c.dir != "" && step != c.at }

// save snapshots t's state at step, with the loss bookkeeping, and starts
// writing it (sync: and waits for the write).
func (c *checkpointer) save(t *trainer, step int64, epochLossSum, lastEpochLoss []float64, sync bool) error {
	if err := c.w.wait(); err != nil {
		return err
	}
	if err := t.snapshotInto(&c.snap); err != nil {
		return err
	}
	c.snap.step = step
	c.snap.epochLossSum, c.snap.lastEpochLoss = slices.Clone(epochLossSum), slices.Clone(lastEpochLoss)
	c.w.start(&c.snap)
	c.saves++
	c.last, c.at = time.Now(), step
	if sync || t.liveHost() {
		return c.w.wait()
	}
	return nil
}

// fingerprint is what a checkpoint must match: everything that shapes the
// trajectory except Epochs (a finished group can be extended).
func (t *trainer) fingerprint() string {
	type rep struct {
		Name     string
		Seed     uint64
		LR       float64
		FlipProb float64
		Prior    float64
	}
	reps := make([]rep, len(t.cfg.Replicas))
	for i, r := range t.cfg.Replicas {
		reps[i] = rep{r.Name, r.Seed, r.LR, r.Params.FlipProb, r.Params.Prior}
	}
	return fingerprintOf(struct {
		Model         string
		Init          string
		Loss          string
		Adam          AdamConfig
		Sparse        bool
		Rows, Bag     int
		StepsPerEpoch int64
		Replicas      []rep
		Sized         bool `json:",omitempty"` // bags of any size (absent before them: old checkpoints keep their fingerprint)
	}{t.m.key(), t.m.Init.String(), t.cfg.Loss.String(), t.cfg.Adam, t.cfg.SparseEmbedding, t.s.b, t.s.bag, t.spe, reps, t.s.sized})
}
