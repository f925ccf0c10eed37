package pipeline

import (
	"cmp"
	"fmt"
	"strings"

	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/internal/memctl"
	"labelprivacy/model"
)

// memoryEstimate is what a session would hold: the dataset's rows and the
// model a group trains, in bytes.
type memoryEstimate struct {
	data, model float64
	fp          model.Footprint
	replicas    int
}

// estimateMemory estimates, from meta.json alone (nothing loaded), the
// dataset in memory — dense features (float32), sparse indices (at most
// max_indices_per_row a row) and offsets, labels, η of synthetic data, and
// a batch source's 8 bytes a row — and, when the backend keeps the model
// in this machine's memory, one group's parameters, Adam moments and
// activations (model.Footprint; on backend go every copy of the
// parameters it makes, Footprint.GoBytes).
func (s *Session) estimateMemory(m *data.Meta) (memoryEstimate, error) {
	c := s.cfg
	rows := float64(m.TrainRows + m.TestRows)
	perRow := 4*float64(len(m.Features)) + 1 + 8
	if m.Source == "synth" {
		perRow += 8 // eta
	}
	if m.HashBuckets > 0 {
		perRow += 4*float64(max(m.MaxIndices, 1)) + 8
	}
	e := memoryEstimate{data: rows * perRow, replicas: max(c.Train.Replicas.N, 1)}
	if !c.Backend.HostMemory() {
		return e, nil
	}
	// model.hidden is mlp's key alone (modelConfig): higgs_mlp and
	// kdd_embed have their own layers, whatever the default says.
	mc := model.ModelConfig{Kind: c.Model.Kind, InputDim: len(m.Features), Init: c.Model.Init, Buckets: int(m.HashBuckets)}
	if mc.Kind == model.KindMLP {
		mc.Hidden = c.Model.Hidden
	}
	if mc.Kind == model.KindKDDEmbed {
		mc.InputDim = 0
	} else if mc.InputDim == 0 {
		return e, nil // modelConfig reports the missing dense features
	}
	mc, err := mc.WithDefaults()
	if err != nil {
		return e, err
	}
	e.fp = mc.Footprint(e.replicas, c.Train.BatchSize)
	e.model = e.fp.Bytes()
	if c.Backend.IsGo() {
		e.model = e.fp.GoBytes()
	}
	return e, nil
}

// checkMemory refuses, before the dataset is loaded or a model built, a
// dataset or model that would not fit in the memory this process can still
// use (memctl.Headroom: the smallest of MemAvailable, the cgroup's limit
// and the address-space limit RLIMIT_AS), with the estimate, the limit
// that refused it and the key to change: a Go out-of-memory crash is a
// wall of stack traces; this is one line. Where the available memory
// cannot be read, nothing is refused.
func (s *Session) checkMemory(m *data.Meta) error {
	lim, ok := memctl.Headroom()
	if !ok {
		return nil
	}
	e, err := s.estimateMemory(m)
	if err != nil {
		return err
	}
	if e.data+e.model <= float64(lim.Bytes) {
		return nil
	}
	have := fmt.Sprintf("more than the %s %s", gb(float64(lim.Bytes)), lim.Where(gb))
	c := s.cfg
	sparse := ""
	if m.HashBuckets > 0 {
		sparse = fmt.Sprintf(" and up to %d sparse indices", m.MaxIndices)
	}
	dataWhat := fmt.Sprintf("the dataset needs about %s in memory (%d rows of %d dense features%s)", gb(e.data),
		m.TrainRows+m.TestRows, len(m.Features), sparse)
	if e.data >= e.model {
		key := "data.path"
		if c.Data.Path == "" {
			key = "data.synth.rows"
		}
		return fmt.Errorf("%s: %s, %s; use fewer rows or a larger machine", key, dataWhat, have)
	}
	key, fix := "model.kind", "choose a smaller model"
	if c.Model.Kind == model.KindMLP {
		key, fix = "model.hidden", "make model.hidden smaller"
	}
	name := c.Model.Kind.String()
	if len(c.Model.Hidden) > 0 {
		name = strings.ReplaceAll(fmt.Sprint(c.Model.Hidden), " ", ", ")
	}
	also := ""
	if e.data > 0 {
		also = fmt.Sprintf(", plus %s for the dataset", gb(e.data))
	}
	with := "Adam's moments"
	if c.Backend.IsGo() {
		with = fmt.Sprintf("the %g copies of the parameters backend go holds (moments, gradients, a step's outputs; measured)", model.GoStateCopies)
	}
	return fmt.Errorf("%s: %s makes %.3g parameters per model: about %s for %s with %s and the activations of train.batch_size %d%s, %s; %s",
		key, name, e.fp.Params, gb(e.model), english.Count(e.replicas, "model"), with, c.Train.BatchSize, also, have, fix)
}

// gb formats bytes as MB, GB or TB.
func gb(b float64) string {
	switch {
	case b < 1e9:
		return fmt.Sprintf("%.0f MB", b/1e6)
	case b < 1e12:
		return fmt.Sprintf("%.3g GB", b/1e9)
	}
	return fmt.Sprintf("%.3g TB", b/1e12)
}

// plannedMeta is the dataset's meta.json before the data stage: data.path's,
// or for a dataset to synthesize, what it will hold.
func (s *Session) plannedMeta() (*data.Meta, error) {
	c := s.cfg
	if c.Data.Path != "" {
		m, err := data.ReadMeta(c.Data.Path)
		if err != nil {
			return nil, fmt.Errorf("data.path: %w", err)
		}
		return m, nil
	}
	sc := c.Data.Synth
	m := &data.Meta{Source: "synth", TrainRows: int64(sc.Rows), TestRows: int64(sc.TestRows), Features: data.SynthFeatureNames(sc.Features),
		Classes: sc.Classes}
	if sc.Kind == data.SynthValues {
		m.Labels, m.ValueMax, m.ValueStep = data.LabelsValues, cmp.Or(sc.ValueMax, data.DefaultValueMax), cmp.Or(sc.ValueStep, data.DefaultValueStep)
	}
	return m, nil
}
