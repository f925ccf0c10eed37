package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"

	"labelprivacy/internal/mix"
	"labelprivacy/model"
	"labelprivacy/pets"
)

// Setting is one point of the PET grid: validated parameters and the
// mechanism built from them once.
type Setting struct {
	pets.Params
	Mech *pets.Mechanism
	// ID names the setting in paths and tables: none, rr_eps1, llp_k8,
	// llp_geom_k8_eps0.5.
	ID string
}

// SettingID is the name of a setting with these parameters.
func SettingID(p pets.Params) string {
	id := p.Kind.String()
	if p.K > 0 {
		id += "_k" + strconv.Itoa(p.K)
	}
	if p.Epsilon > 0 {
		id += "_eps" + strconv.FormatFloat(p.Epsilon, 'g', -1, 64)
	}
	return id
}

// Settings expands `pets:` into settings (k × epsilon per entry), in config
// order, without duplicates.
func Settings(cfg []PetConfig) ([]*Setting, error) {
	var out []*Setting
	seen := map[pets.Params]bool{}
	for i, p := range cfg {
		ks, eps := p.K, p.Epsilon
		if len(ks) == 0 {
			ks = []int{0}
		}
		if len(eps) == 0 {
			eps = []float64{0}
		}
		for _, k := range ks {
			for _, e := range eps {
				pp := pets.Params{Kind: p.Mechanism, K: k, Epsilon: e}
				if seen[pp] {
					continue
				}
				seen[pp] = true
				m, err := pets.New(pp)
				if err != nil {
					return nil, fmt.Errorf("%w: pets[%d]: %w", ErrConfig, i, err)
				}
				out = append(out, &Setting{Params: pp, Mech: m, ID: SettingID(pp)})
			}
		}
	}
	return out, nil
}

// Releases reports whether the setting's models train on a release (every
// mechanism except none, which trains on the clean labels, and bot, which
// releases nothing and trains nothing).
func (s *Setting) Releases() bool { return s.Kind != pets.None && s.Kind != pets.Bot }

// Trains reports whether the setting's runs train a model (bot's best
// model is a constant score).
func (s *Setting) Trains() bool { return s.Kind != pets.Bot }

// RunSpec is one model of the grid: a setting × learning rate × trial, with
// its identity and seeds computed once, here.
type RunSpec struct {
	Setting *Setting
	LR      float64
	Trial   int
	Loss    model.Loss // zero for bot
	// Seed is the run's seed: derived from (config seed, setting, trial)
	// only, so a trial's models at every learning rate share their
	// initialization, data order and release, and so do a run's copies on
	// another backend or in another group.
	Seed uint64
	// ID is the run_id: a hash of the dataset's content identity, the
	// config fingerprint (which includes the backend), the setting, the
	// learning rate, the trial and the config seed.
	ID string
	// Index is the run's position in the grid.
	Index int
}

// Seeds derived from a run's Seed (and a release's, from the config seed).
func (r *RunSpec) InitSeed() uint64    { return DeriveSeed(r.Seed, "init") }
func (r *RunSpec) ShuffleSeed() uint64 { return DeriveSeed(r.Seed, "shuffle") }

// Name is how progress and errors name the run.
func (r *RunSpec) Name() string {
	return fmt.Sprintf("%s lr=%g trial=%d", r.Setting.ID, r.LR, r.Trial)
}

// DeriveSeed derives an independent sub-seed of base for one purpose (e.g.
// "release", a setting id, a trial): FNV-1a of the labels, mixed with base
// through SplitMix64. Every random choice of a run flows from the config
// seed through here into explicit math/rand/v2 sources.
func DeriveSeed(base uint64, labels ...string) uint64 {
	h := fnv.New64a()
	for _, l := range labels {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	return mix.SplitMix64(base ^ h.Sum64())
}

// runSeed is the seed of trial t of setting s.
func runSeed(cfgSeed uint64, s *Setting, trial int) uint64 {
	return DeriveSeed(cfgSeed, "run", s.ID, strconv.Itoa(trial)) >> 1 // < 2^63: int64-safe in tables
}

// ReleaseSeed is the seed of trial t's simulation release of setting s:
// fresh bags and noise per trial, as in the paper.
func ReleaseSeed(cfgSeed uint64, s *Setting, trial int) uint64 {
	return DeriveSeed(cfgSeed, "release", s.ID, strconv.Itoa(trial))
}

// lossOf is the loss a setting trains with (zero for bot).
func lossOf(c *Config, s *Setting) model.Loss {
	switch {
	case s.Kind == pets.None:
		return model.LossBCE
	case s.Kind == pets.RR:
		return c.Train.RRLoss
	case s.Kind.IsLLP():
		return c.Train.LLPLoss
	}
	return 0
}

// Fingerprint is everything shared by a config's runs that changes their
// results, except the grid axes (setting, learning rate, trial) and the
// dataset: runs with different fingerprints are never averaged together.
// It excludes train.replicas, which never changes a result, and the
// output and cluster keys.
type Fingerprint struct {
	Model         string `json:"model"`
	Hidden        []int  `json:"hidden,omitempty"`
	Init          string `json:"init"`
	Standardize   bool   `json:"standardize"`
	Epochs        int    `json:"epochs"`
	BatchSize     int    `json:"batch_size"`
	RRLoss        string `json:"rr_loss"`
	LLPLoss       string `json:"llp_loss"`
	Sparse        bool   `json:"sparse_embedding,omitempty"`
	KeepRemainder bool   `json:"keep_remainder,omitempty"`
	Backend       string `json:"backend"`
}

// ConfigID is the short hash of c's fingerprint.
func ConfigID(c *Config) string {
	f := Fingerprint{Model: c.Model.Kind.String(), Init: c.Model.Init.String(), Standardize: c.Data.Standardize,
		Epochs: c.Train.Epochs, BatchSize: c.Train.BatchSize, RRLoss: c.Train.RRLoss.String(), LLPLoss: c.Train.LLPLoss.String(),
		KeepRemainder: c.Privacy.KeepRemainder, Backend: c.Backend}
	if c.Model.Kind == model.KindMLP {
		f.Hidden = c.Model.Hidden
	}
	if c.Model.Kind == model.KindKDDEmbed {
		f.Sparse = c.Train.SparseEmbedding
	}
	return "cfg:" + shortHash(f)
}

func shortHash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // programmer bug: only plain values are hashed
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Runs expands the grid into runs in a fixed order (settings in config
// order, then trials, then learning rates) so that groups and shards
// partition it deterministically. dataset is the dataset's content
// identity.
func Runs(c *Config, settings []*Setting, dataset string) []*RunSpec {
	cfgID := ConfigID(c)
	var out []*RunSpec
	for _, s := range settings {
		for t := range c.Train.Trials {
			seed := runSeed(c.Seed, s, t)
			for _, lr := range c.Train.LearningRates {
				r := &RunSpec{Setting: s, LR: lr, Trial: t, Loss: lossOf(c, s), Seed: seed, Index: len(out)}
				r.ID = shortHash(struct {
					Dataset, Config, Setting string
					LR                       uint64
					Trial                    int
					Seed                     uint64
				}{dataset, cfgID, s.ID, math.Float64bits(lr + 0), t, c.Seed})
				out = append(out, r)
			}
		}
	}
	return out
}
