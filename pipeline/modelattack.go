package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"labelprivacy/audit"
	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/internal/par"
	"labelprivacy/pets"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/report"
)

// The model attack (audit.model_attack, issue 39). Fit: every trained model
// also predicts a probe of audit.model_rows training rows, chosen by a seed
// that reads no label, and its predictions on those rows and on the audit
// rows are stored (store.PutModelHat). Audit: each model guesses its
// training rows' labels by argmax (audit.ModelAttack), scored against the
// true labels — read by the audit only — over the prior-only attacker; on
// synthetic data, with the true η, against the exact posteriors given the
// release the model trained on (audit.ReleasePosteriors: the bracket, which
// fails the audit for a model that beats its release), and the same
// attacker on the audit rows (non-members).

// modelProbe is the training rows every model predicts for the model
// attack: their row numbers and a copy of their features.
type modelProbe struct {
	rows  []int
	frame *data.Frame // owns the features
}

// features returns the probe's features (nil for no probe).
func (p *modelProbe) features() *data.Features {
	if p == nil {
		return nil
	}
	return p.frame.FeaturesOnly()
}

// modelProbe returns the session's probe (made once; nil when the model
// attack is off or the session has no training features).
func (s *Session) modelProbe() *modelProbe {
	if !s.cfg.Audit.ModelAttack || s.light || s.train == nil || s.train.Rows == 0 || s.values() {
		return nil
	}
	s.probeOnce.Do(func() {
		rows := sampleRows(s.train.Rows, s.cfg.Audit.ModelRows, deriveSeed(s.cfg.Seed, "model-attack-rows"))
		s.probe = &modelProbe{rows: rows, frame: s.train.Take(rows)}
	})
	return s.probe
}

// probeState is the once-made probe of a session.
type probeState struct {
	probeOnce sync.Once
	probe     *modelProbe
}

// sampleRows returns m of the rows 0..n−1 (all of them when m ≥ n),
// increasing, drawn by Floyd's algorithm from seed alone: O(m), whatever
// n.
func sampleRows(n, m int, seed uint64) []int {
	if m >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, 0x39))
	in := make(map[int]bool, m)
	out := make([]int, 0, m)
	for j := n - m; j < n; j++ {
		t := r.IntN(j + 1)
		if in[t] {
			t = j
		}
		in[t] = true
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// putModelHat stores a run's probe and audit-row predictions.
func (s *Session) putModelHat(st store.Store, id string, o outcome) error {
	p := s.modelProbe()
	if p == nil {
		return nil
	}
	n := min(s.cfg.Audit.Examples, s.test.Rows) * heads(s.classes())
	return st.PutModelHat(id, p.rows, o.ProbeProbs, o.Probs[:min(n, len(o.Probs))], s.classes())
}

// modelProbeCost says what predicting the probe cost the fit stage.
func (s *Session) modelProbeCost(probeS, wall float64) string {
	return fmt.Sprintf("model attack (audit.model_attack): predicting %d training rows with every model took %.2f s of the %.1f s (%.1f%%)",
		len(s.modelProbe().rows), probeS, wall, 100*probeS/wall)
}

// modelAttacker is the audit stage's model attack.
type modelAttacker struct {
	s        *Session
	st       store.Store
	c, w     int       // classes; values per prediction
	n        int       // audit rows (non-members)
	trainEta []float64 // every training row's true η (nil: the data has none, no bracket)
	testEta  []float64 // the audit rows' η for the non-members' prior
	prior    string    // "true" or the audit's η source
	specs    map[string]*runSpec
	rows     []report.ModelAttack
	spent    time.Duration
}

// newModelAttacker prepares the model attack: the true η of the training
// rows where the data has it (read from the training file: the session
// leaves it unread), else the audit's η (eta, of the audit rows; source
// names it).
func (s *Session) newModelAttacker(eta []float64, source string) (*modelAttacker, error) {
	c := s.classes()
	a := &modelAttacker{s: s, st: store.Store{Dir: s.cfg.Output}, c: c, w: heads(c), n: min(s.cfg.Audit.Examples, s.test.Rows),
		specs: map[string]*runSpec{}}
	for _, r := range s.runs {
		a.specs[r.ID] = r
	}
	if s.dataset != nil && s.train != nil { // not a session made by hand in a test
		var err error
		if a.trainEta, err = data.ReadEta(data.SplitFile(s.dataset.Dir, "train"), c); err != nil {
			return nil, fmt.Errorf("audit: model attack: %w", err)
		}
	}
	truth := s.test.Eta
	if c >= 3 {
		truth = s.test.EtaC
	}
	switch {
	case a.trainEta != nil && len(a.trainEta) == s.train.Rows*a.w && len(truth) >= a.n*a.w:
		a.testEta, a.prior = truth[:a.n*a.w], "true"
	default:
		a.trainEta, a.testEta, a.prior = nil, eta[:a.n*a.w], source
	}
	return a, nil
}

// modelSummary is what the model attack adds to a setting's audit row.
type modelSummary struct {
	runs, rows                             int
	adv, advSE, releaseAdv                 float64
	nonmember, nonmemberSE                 float64
	runsAttacked, runsMissing, runsChecked int
}

// setting attacks every run of set that stored its predictions, appends
// their rows, fails on a model that beats its release (with the true η),
// and returns the summary over the best learning rate's trials. Releases
// (their posteriors) and runs are worked on in parallel, the results
// combined in run order.
func (a *modelAttacker) setting(set *setting, runs []report.Run) (modelSummary, error) {
	start := time.Now()
	defer func() { a.spent += time.Since(start) }()
	out := modelSummary{adv: math.NaN(), advSE: math.NaN(), releaseAdv: math.NaN(), nonmember: math.NaN(), nonmemberSE: math.NaN()}
	s := a.s
	key := report.SettingKey{Dataset: s.datasetID, ConfigID: s.configID, Setting: set.ID}
	best, haveBest := report.BestLR(runs)[key]
	type job struct {
		r   *report.Run
		hat *store.ModelHat
		key string // its release posteriors' (releaseKey)
		row report.ModelAttack
		err error
	}
	var jobs []*job
	for i := range runs {
		r := &runs[i]
		if r.Dataset != key.Dataset || r.ConfigID != key.ConfigID || r.Setting != key.Setting {
			continue
		}
		hat, err := a.st.ModelHat(r.RunID, a.c)
		if err != nil {
			return out, fmt.Errorf("audit %s: model attack: %w", set.ID, err)
		}
		if hat == nil {
			out.runsMissing++
			continue
		}
		jobs = append(jobs, &job{r: r, hat: hat})
	}
	// The posteriors of each release (and probe) the runs trained on, once.
	posts := map[string]*releasePost{}
	var todo []*job
	if a.trainEta != nil {
		for _, j := range jobs {
			spec := a.specs[j.r.RunID]
			if spec == nil {
				return out, fmt.Errorf("audit %s: model attack: run %s is not in this config's grid", set.ID, j.r.RunID)
			}
			j.key = releaseKey(spec.Plan.Release, j.hat.TrainRows)
			if _, ok := posts[j.key]; !ok {
				posts[j.key] = nil
				todo = append(todo, j)
			}
		}
	}
	made, errs := make([]*releasePost, len(todo)), make([]error, len(todo))
	par.Each(len(todo), 0, func(_, i int) {
		made[i], errs[i] = a.releasePost(set, a.specs[todo[i].r.RunID], todo[i].hat.TrainRows)
	})
	for i, j := range todo {
		if errs[i] != nil {
			return out, fmt.Errorf("audit %s: model attack on run %s: %w", set.ID, j.r.RunID, errs[i])
		}
		posts[j.key] = made[i]
	}
	par.Each(len(jobs), 0, func(_, i int) {
		j := jobs[i]
		j.row, j.err = a.run(set, j.r, j.hat, posts[j.key])
	})
	var sum, se2, rel, non, nonSE2 float64
	for _, j := range jobs {
		if j.err != nil {
			return out, j.err
		}
		row := j.row
		a.rows = append(a.rows, row)
		out.runsAttacked++
		if !math.IsNaN(row.Excess) {
			out.runsChecked++
		}
		if haveBest && j.r.LR == best.LR {
			out.runs++
			out.rows = row.Rows
			sum, se2, rel = sum+row.Adv, se2+row.AdvSE*row.AdvSE, rel+row.ReleaseAdv
			non, nonSE2 = non+row.NonmemberAdv, nonSE2+row.NonmemberAdvSE*row.NonmemberAdvSE
		}
	}
	if k := float64(out.runs); k > 0 {
		out.adv, out.advSE, out.releaseAdv = sum/k, math.Sqrt(se2)/k, rel/k
		out.nonmember, out.nonmemberSE = non/k, math.Sqrt(nonSE2)/k
	}
	return out, nil
}

// releaseKey names a release's posteriors on a probe: its path and the
// probe's rows (a hash).
func releaseKey(path string, probe []int) string {
	h := fnv.New64a()
	for _, r := range probe {
		binary.Write(h, binary.LittleEndian, int64(r))
	}
	return fmt.Sprintf("%s#%d#%x", path, len(probe), h.Sum64())
}

// run is the model attack on one run, and the bracket.
func (a *modelAttacker) run(set *setting, r *report.Run, hat *store.ModelHat, rp *releasePost) (report.ModelAttack, error) {
	s := a.s
	row := report.ModelAttack{Dataset: r.Dataset, ConfigID: r.ConfigID, Setting: r.Setting, Pet: r.Pet, K: r.K, Epsilon: r.Epsilon,
		RunID: r.RunID, LR: r.LR, Trial: r.Trial, Prior: a.prior, Rows: len(hat.TrainRows),
		ReleaseAdv: math.NaN(), Expected: math.NaN(), Excess: math.NaN(), Slack: math.NaN(), Z: math.NaN()}
	fail := func(err error) (report.ModelAttack, error) {
		return row, fmt.Errorf("audit %s: model attack on run %s: %w", set.ID, r.RunID, err)
	}
	for _, i := range hat.TrainRows {
		if i < 0 || i >= s.train.Rows {
			return fail(fmt.Errorf("probed training row %d of %d", i, s.train.Rows))
		}
	}
	// Non-members: the audit rows, which no model trained on.
	nn := min(a.n, len(hat.Test)/a.w)
	rows := make([]int, nn)
	for i := range rows {
		rows[i] = i
	}
	non, err := audit.ModelAttack(&audit.ModelGuesses{Classes: a.c, Eta: a.testEta[:nn*a.w], Label: s.test.Label[:nn], Rows: rows,
		Prob: hat.Test[:nn*a.w]}, audit.GuardAlpha)
	if err != nil {
		return fail(err)
	}
	row.NonmemberRows, row.NonmemberAcc, row.NonmemberAdv, row.NonmemberAdvSE = nn, non.ModelAcc, non.Adv, non.AdvSE
	// Members.
	if a.trainEta == nil {
		// No prior on the training rows (a clean model's η̂ there has seen
		// their labels): the prior's accuracy is its accuracy on the audit
		// rows, an unpaired comparison. The Eta given is a placeholder.
		m, err := audit.ModelAttack(&audit.ModelGuesses{Classes: a.c, Eta: hat.Train, Label: takeLabels(s.train.Label, hat.TrainRows),
			Rows: seq(len(hat.TrainRows)), Prob: hat.Train}, audit.GuardAlpha)
		if err != nil {
			return fail(err)
		}
		row.ModelAcc, row.PriorAcc = m.ModelAcc, non.PriorAcc
		row.Adv, row.AdvSE = m.ModelAcc-non.PriorAcc, math.Hypot(m.ModelAccSE, non.PriorAccSE)
		return row, nil
	}
	if rp == nil {
		return fail(fmt.Errorf("no release posteriors"))
	}
	attacked := make([]int, len(hat.TrainRows))
	for j, i := range hat.TrainRows {
		attacked[j] = int(rp.local[i])
	}
	m, err := audit.ModelAttack(&audit.ModelGuesses{Classes: a.c, Eta: rp.eta, Label: rp.label, Release: rp.ps, Rows: attacked, Prob: hat.Train}, audit.GuardAlpha)
	if err != nil {
		return fail(err)
	}
	row.ModelAcc, row.PriorAcc, row.Adv, row.AdvSE = m.ModelAcc, m.PriorAcc, m.Adv, m.AdvSE
	row.ReleaseAdv, row.Expected, row.Excess, row.Slack, row.Z = m.BayesAdv, m.Expected, m.Excess, m.Slack, m.Z
	if m.Exceeds() {
		return row, &audit.BracketViolation{Setting: set.ID, Run: fmt.Sprintf("%s (lr=%g trial=%d)", r.RunID, r.LR, r.Trial), Result: m}
	}
	return row, nil
}

// releasePost is a release's exact posteriors on the rows the model
// attack needs (the probe, and for bags every member of their bags), on
// local indices.
type releasePost struct {
	local []int32   // training row → local index (−1: not needed)
	eta   []float64 // local rows' true η
	label []uint8   // local rows' true labels
	ps    *audit.Posteriors
}

// releasePost computes the posteriors of spec's release on the probe's
// rows.
func (a *modelAttacker) releasePost(set *setting, spec *runSpec, probe []int) (*releasePost, error) {
	path := spec.Plan.Release
	s := a.s
	rp := &releasePost{local: make([]int32, s.train.Rows)}
	for i := range rp.local {
		rp.local[i] = -1
	}
	add := func(i int) int {
		if j := rp.local[i]; j >= 0 {
			return int(j)
		}
		j := len(rp.label)
		rp.local[i] = int32(j)
		rp.label = append(rp.label, s.train.Label[i])
		rp.eta = append(rp.eta, a.trainEta[i*a.w:(i+1)*a.w]...)
		return j
	}
	rel := &audit.ModelRelease{}
	switch sp := set.Kind.Spec(); {
	case sp.Release == pets.ReleaseRaw: // none: the clean model trains on the labels themselves
		for _, i := range probe {
			rel.Row = append(rel.Row, add(i))
			rel.Label = append(rel.Label, s.train.Label[i])
		}
	case path == "":
		return nil, fmt.Errorf("%s trains on no release", set.ID)
	default:
		f, err := readRelease(path)
		if err != nil {
			return nil, err
		}
		if len(f.Row) != f.Rows {
			return nil, fmt.Errorf("release %s has no %s column", path, data.ColRow)
		}
		if err := fillModelRelease(rel, f, a.c, probe, s.train.Rows, add); err != nil {
			return nil, fmt.Errorf("release %s: %w", path, err)
		}
	}
	for _, i := range probe { // an LLP remainder left out of every bag: its posterior is its prior
		add(i)
	}
	var err error
	if rp.ps, err = audit.ReleasePosteriors(set.Mech, rp.eta, rel); err != nil {
		return nil, fmt.Errorf("release %s: %w", path, err)
	}
	return rp, nil
}

// fillModelRelease copies into rel the rows of release frame f the model
// attack of probe needs: the probe's rows, and for bags every row of a bag
// that holds one; add maps a training row (of n) to its local index.
func fillModelRelease(rel *audit.ModelRelease, f *data.Frame, c int, probe []int, n int, add func(int) int) error {
	in := make([]bool, n)
	for _, i := range probe {
		in[i] = true
	}
	for _, r := range f.Row {
		if r < 0 || r >= int64(n) {
			return fmt.Errorf("row %d of %d training rows", r, n)
		}
	}
	bagID := f.BagID
	if bagID == nil && (f.Alpha != nil || f.AlphaC != nil) {
		// Proportions without bags (pets.ReleaseCounts): every row a bag
		// of one of the kind's BagLaw.
		bagID = make([]int64, len(f.Row))
		for j := range bagID {
			bagID[j] = int64(j)
		}
	}
	bags := bagID != nil
	keep := in // by row; for bags, every row of a bag holding a probe row
	rows := len(probe)
	if bags {
		keep = make([]bool, n)
		rows = 0
		for start := 0; start < len(f.Row); {
			end, any := start, false
			for ; end < len(f.Row) && bagID[end] == bagID[start]; end++ {
				any = any || in[f.Row[end]]
			}
			if any {
				for j := start; j < end; j++ {
					keep[f.Row[j]] = true
				}
				rows += end - start
			}
			start = end
		}
	}
	rel.Row, rel.Skip = make([]int, 0, rows), make([]bool, 0, rows)
	if bags {
		rel.Bag, rel.Alpha = make([]int64, 0, rows), make([]float64, 0, rows*max(1, c-1))
	} else {
		rel.Label = make([]uint8, 0, rows)
	}
	for j, r := range f.Row {
		if !keep[r] {
			continue
		}
		rel.Row = append(rel.Row, add(int(r)))
		rel.Skip = append(rel.Skip, !in[r])
		switch {
		case bags && c >= 3:
			rel.Bag = append(rel.Bag, bagID[j])
			rel.Alpha = append(rel.Alpha, f.AlphaC[j*(c-1):(j+1)*(c-1)]...)
		case bags:
			rel.Bag, rel.Alpha = append(rel.Bag, bagID[j]), append(rel.Alpha, f.Alpha[j])
		default:
			if f.LabelRR == nil {
				return fmt.Errorf("no %s column", data.ColLabelRR)
			}
			rel.Label = append(rel.Label, f.LabelRR[j])
		}
		switch { // a kind released with a prior: each row's (its channel's key)
		case c < 3 && f.Prior != nil:
			rel.Prior = append(rel.Prior, f.Prior[j])
		case c >= 3 && f.PriorC != nil:
			rel.Prior = append(rel.Prior, f.PriorC[j*c:(j+1)*c]...)
		}
	}
	return nil
}

func takeLabels(labels []uint8, rows []int) []uint8 {
	out := make([]uint8, len(rows))
	for j, i := range rows {
		out[j] = labels[i]
	}
	return out
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// modelAudit is the audit stage's model attack and canaries through
// training (either nil when off).
type modelAudit struct {
	attack  *modelAttacker
	canary  *canaryModels
	canaryS time.Duration
}

// newModelAudit prepares them, saying why canaries are not played when
// asked for.
func (s *Session) newModelAudit(eta []float64, source string) (*modelAudit, error) {
	m := &modelAudit{}
	if !s.cfg.Audit.ModelAttack && s.cfg.Audit.ModelCanaries == 0 {
		return m, nil
	}
	a, err := s.newModelAttacker(eta, source)
	if err != nil {
		return nil, err
	}
	if s.cfg.Audit.ModelAttack {
		m.attack = a
	}
	var why string
	if m.canary, why = s.newCanaryModels(a.trainEta); why != "" {
		s.ev.Warn("audit", "audit.model_canaries: no canaries through training: "+why)
	}
	return m, nil
}

// Close releases the canary models' executor.
func (m *modelAudit) Close() {
	if m.canary != nil {
		m.canary.Close()
	}
}

// setting fills a's model-attack and canary columns for set (NaN when off)
// and says them.
func (m *modelAudit) setting(ctx context.Context, s *Session, set *setting, runs []report.Run, a *report.Audit) error {
	a.ModelAdv, a.ModelAdvSE, a.ModelReleaseAdv, a.ModelAdvNonmember, a.ModelAdvNonmemberSE = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	a.EpsLowerModel, a.ModelCanaryAUC = math.NaN(), math.NaN()
	if m.attack != nil {
		start := time.Now()
		sum, err := m.attack.setting(set, runs)
		if err != nil {
			return err
		}
		took := time.Since(start).Seconds()
		a.ModelRuns, a.ModelRows, a.ModelPrior = sum.runs, sum.rows, m.attack.prior
		a.ModelAdv, a.ModelAdvSE, a.ModelReleaseAdv = sum.adv, sum.advSE, sum.releaseAdv
		a.ModelAdvNonmember, a.ModelAdvNonmemberSE = sum.nonmember, sum.nonmemberSE
		if sum.runs > 0 {
			line := fmt.Sprintf("%-22s model attack (%s at the best LR, %d training rows, prior %s): adv %.5f ± %.5f on members, "+
				"%.5f ± %.5f on the audit rows", set.ID, english.Count(sum.runs, "model"), sum.rows, m.attack.prior, sum.adv, sum.advSE, sum.nonmember, sum.nonmemberSE)
			if !math.IsNaN(sum.releaseAdv) {
				line += fmt.Sprintf("; the release gives the Bayes attacker %.5f on those rows (%d of %d models checked against it)",
					sum.releaseAdv, sum.runsChecked, sum.runsAttacked)
			}
			s.ev.Info("audit", line+fmt.Sprintf("; %.2f s", took))
		}
		if sum.runsMissing > 0 && sum.runsAttacked == 0 && set.Trains() {
			s.ev.Info("audit", fmt.Sprintf("%s: no model attack: its %d runs stored no predictions for it (trained with audit.model_attack off, "+
				"or before it existed; train fit retrains nothing, remove OUT/runs to retrain)", set.ID, sum.runsMissing))
		}
	}
	if m.canary != nil {
		res, why, err := m.canary.play(ctx, s, set, runs)
		if err != nil {
			return err
		}
		if res == nil {
			if why != "" {
				s.ev.Info("audit", fmt.Sprintf("%s: no canaries through training: %s", set.ID, why))
			}
			return nil
		}
		m.canaryS += res.wall
		a.ModelCanaries, a.EpsLowerModel, a.ModelCanaryAUC = res.played, res.eps, res.auc
		own := ""
		if !math.IsNaN(a.EpsLower) {
			own = fmt.Sprintf("; the release's own canary game: ε ≥ %.3g", a.EpsLower)
		}
		s.ev.Info("audit", fmt.Sprintf("%-22s canaries through training: ε ≥ %.3g (95%%, %d canaries%s); "+
			"the canary model's test AUC %.4f, its twin run's %.4f; %.1f s", set.ID, res.eps, res.played, own, res.auc, res.twin,
			res.wall.Seconds()))
	}
	return nil
}

// finish writes model_attack.csv and .parquet and says what the model
// attack and the canaries cost.
func (m *modelAudit) finish(s *Session, wall time.Duration) error {
	if m.attack != nil {
		t := report.ModelAttackTable(m.attack.rows)
		if err := t.WriteCSV(s.Out("model_attack.csv")); err != nil {
			return err
		}
		if err := t.WriteParquet(s.Out("model_attack.parquet")); err != nil {
			return err
		}
		s.ev.Info("audit", fmt.Sprintf("wrote %s (%d models); the model attack took %.2f s of the audit's %.1f s",
			s.Out("model_attack.csv"), len(m.attack.rows), m.attack.spent.Seconds(), wall.Seconds()))
	}
	if m.canaryS > 0 {
		s.ev.Info("audit", fmt.Sprintf("canaries through training (audit.model_canaries): %.1f s of the audit's %.1f s",
			m.canaryS.Seconds(), wall.Seconds()))
	}
	return nil
}
