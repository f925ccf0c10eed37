package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/atomicfile"
	"labelprivacy/internal/english"
	"labelprivacy/ledger"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// PrivatizeOptions configure a release meant to leave the machine.
type PrivatizeOptions struct {
	In, Out string      // labelled input (Arrow or Parquet); release file (Arrow IPC: .arrow, .feather, .ipc)
	Params  pets.Params // mechanism (Secure is set for llp_lap: the grid Laplace sampler)
	// Seed, when set, makes a reproducible release (noise "seeded"): anyone
	// who learns or guesses the seed undoes it. Nil: crypto/rand.
	Seed          *uint64
	KeepRemainder bool
	// DeltaPrime is δ' of the ledger's (ε, δ') totals; 0: the ledger's own
	// (ledger.DefaultDeltaPrime for a new ledger).
	DeltaPrime float64
	// Ledger is the privacy ledger's file; empty: the user's default
	// (ledger.DefaultPath), one per user, where every release of the same
	// people composes whatever folder or copy it comes from.
	Ledger string
	// IDColumn names In's column identifying people (not a feature, never
	// shipped); empty: a person is known by its feature values.
	IDColumn string
	// Budget refuses a release that would take anyone above this ε (at the
	// ledger's δ'); 0: no budget.
	Budget float64
	// AllowLabelLike names feature columns to ship although they give the
	// labels away (release.LabelLikeColumns: the label is a function of
	// them, or alone they separate a class with AUC ≥ 0.99); each is
	// warned of and recorded in the release's metadata. Any other
	// label-like column is refused.
	AllowLabelLike []string
	// Force replaces an existing Out (never In, a dataset's file or a file
	// beside the ledger).
	Force bool
	// LookupEnv reads the environment for the default ledger; nil:
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Events hears how far it has got (each step, the rows keyed to their
	// people); nil: nothing.
	Events Events
}

// Privatized describes a published release.
type Privatized struct {
	Path, Ledger string
	Release      *release.Release
	Entry        ledger.Row
	// Warnings are things the user should know (δ' above 1/people).
	Warnings []string
}

// ErrRefused is wrapped by privatize's refusals of an out, an input or a
// mechanism (and of an ε outside the config's range, which is a
// *FieldError).
var ErrRefused = errors.New("privatize: refused")

// refuse refuses PrivatizeOptions.Out: a *config.FieldError naming the
// option "out" (and, in its message, other options as `key`), wrapped in
// ErrRefused.
func refuse(format string, args ...any) error { return refuseKey("out", format, args...) }

// refuseKey is a refusal of option key (the CLI names its flag).
func refuseKey(key, format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrRefused, &config.FieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// releaseExts are the file names privatize writes (all Arrow IPC files).
var releaseExts = []string{".arrow", ".feather", ".ipc"}

// Privatize releases the labels of o.In through the mechanism and publishes
// the shippable file at o.Out (features and release columns, random row
// order, no seed), recorded first in the privacy ledger (the user's default
// unless o.Ledger), each row charged to its person. Before writing
// anything it refuses: an ε outside [MinEpsilon, MaxEpsilon]; llp with
// k = 1 (each bag is one row: it ships every raw label); an Out that is
// the input, is not named .arrow/.feather/.ipc, exists (unless Force), or
// lies anywhere under a dataset directory or the ledger's folder; a ledger
// anywhere under Out's folder (links followed); without o.Ledger, a
// ledger left beside the input by an earlier version; a ledger of another
// identity rule or δ'; an input whose bytes are not those its dataset's
// meta.json records, or that changed while it was read; features that are
// not finite; a feature column that gives the labels away
// (release.LabelLikeColumns) unless AllowLabelLike names it; with a
// budget, a release that would take anyone above it. The file's metadata
// names the ledger row that charged it (MetaLedgerRelease, MetaLedgerTag).
// Out is published exclusively (unless Force): of two releases started at
// once to one new Out, one lands and the other is refused naming the file
// (release.ErrExists), its ledger row marked aborted. A later Privatize
// removes the temporaries a killed one left (recorded releases, never
// complete unrecorded ones).
func Privatize(o PrivatizeOptions) (*Privatized, error) {
	p, m, err := privatizeMechanism(o.Params)
	if err != nil {
		return nil, err
	}
	ledgerPath, l, err := privatizeLedger(o)
	if err != nil {
		return nil, err
	}
	prog := startMeter(&syncEvents{ev: orDiscard(o.Events)}, clockOf(o.Events), Progress{Stage: "privatize", What: "reading " + o.In})
	defer prog.Stop()
	in, ids, err := readInput(o.In, o.IDColumn)
	if err != nil {
		return nil, err
	}
	defer in.Close() // in owns its features (off-heap when large): held until the release is written
	m, allowed, err := checkInput(o, in, p, m, prog)
	if err != nil {
		return nil, err
	}
	rule, col := identityOf(ids, false), idColumnOf(ids)
	keys, err := l.Keys()
	if err != nil {
		return nil, err
	}
	if err := l.Check(rule, col); err != nil { // before hashing anyone
		return nil, err
	}
	removeDeadTemps(l)
	rel, entry, err := applyRelease(o, in, ids, m, keys, rule, col, prog)
	if err != nil {
		return nil, err
	}
	ship, err := rel.ShipChunked(in) // a range of rows at a time: no second copy of the features
	if err != nil {
		return nil, err
	}
	md := releaseMeta(rel, entry, keys, allowed)
	prog.Unit("recording the release in the ledger and writing "+o.Out, 0)
	row, err := release.PublishChunked(o.Out, ship, md, l, entry, release.Put(o.Force))
	if err != nil {
		return nil, err
	}
	return &Privatized{Path: o.Out, Ledger: ledgerPath, Release: rel, Entry: row, Warnings: privatizeWarnings(o.Out, allowed, row)}, nil
}

// privatizeMechanism refuses what privatize cannot release (a mechanism
// with a prior stage or parameters it has no flags for; a kind of
// conversion values; llp with k = 1; an
// ε outside the config's range) and builds the mechanism of p, Secure
// wherever there is noise; it returns p as set.
func privatizeMechanism(p pets.Params) (pets.Params, *pets.Mechanism, error) {
	sp := p.Kind.Spec()
	p.Secure = sp.Takes.Epsilon // the floating-point-safe sampler wherever there is noise (llp_lap's grid Laplace)
	switch {
	case sp.Release.WithPrior():
		return p, nil, &config.FieldError{Key: "mechanism", Msg: fmt.Sprintf("%s trains a prior model between its two stages; it runs inside "+
			"train run/fit/sweep (pets: [{mechanism: %[1]s, epsilon: [1]}]), not in privatize", p.Kind)}
	case sp.Takes.Source || sp.Takes.Shares || sp.Takes.KeyGroups:
		return p, nil, &config.FieldError{Key: "mechanism", Msg: fmt.Sprintf("%s takes parameters privatize has no flags for (an attribution source's "+
			"trigger_data, windows and reports; a summary's key and budget_share); it runs inside train run/fit/sweep "+
			"(pets: [{mechanism: %[1]s, …}], README \"Attribution Reporting\"), not in privatize", p.Kind)}
	case p.Kind.OfValues():
		return p, nil, &config.FieldError{Key: "mechanism", Msg: fmt.Sprintf("%s releases conversion values; privatize serves labels that are "+
			"classes: it runs inside train run/fit/sweep (pets: [{mechanism: %[1]s, …}], docs/values.md), not in privatize", p.Kind)}
	case sp.Release.PerBag() && !sp.Privacy.DP() && p.K == 1:
		return p, nil, &config.FieldError{Key: "k", Msg: p.Kind.String() + " with k = 1 puts each row in a bag of its own, whose proportion is its raw " +
			"label: it would ship every label as it is (ε = ∞, like none, which privatize never writes). Use k ≥ 2, or a DP " +
			"mechanism (llp_geom or llp_lap, which are ε-DP at any k, or rr)"}
	}
	if p.Kind.NeedsEpsilon() {
		if err := config.CheckEpsilon(p.Epsilon); err != nil {
			return p, nil, paramField(err)
		}
	}
	m, err := pets.New(p)
	if err != nil {
		return p, nil, paramField(err)
	}
	return p, m, nil
}

// privatizeLedger finds the ledger (o.Ledger, else the user's default,
// refused while an old one sits beside the input), refuses o.Out
// (checkOut) and opens the ledger with o's δ' and budget.
func privatizeLedger(o PrivatizeOptions) (string, *ledger.Ledger, error) {
	ledgerPath, defaulted := o.Ledger, false
	if ledgerPath == "" {
		lookup := o.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		var err error
		if ledgerPath, err = ledger.DefaultPath(lookup); err != nil {
			return "", nil, err
		}
		defaulted = true
	}
	if defaulted {
		if err := checkOldLedger(o.In, ledgerPath); err != nil {
			return "", nil, err
		}
	}
	if err := checkOut(o.In, o.Out, ledgerPath, o.Force); err != nil {
		return "", nil, err
	}
	l, err := ledger.Open(ledgerPath, ledger.Options{DeltaPrime: o.DeltaPrime, Budget: o.Budget})
	if err != nil {
		return "", nil, err
	}
	return ledgerPath, l, nil
}

// checkInput refuses an input without labels, with features that are not
// finite or label-like ones not allowed; it returns the mechanism rebuilt
// for the file's classes when C ≥ 3 (else m) and the label-like columns
// allowed.
func checkInput(o PrivatizeOptions, in *data.Frame, p pets.Params, m *pets.Mechanism, prog *meter) (*pets.Mechanism, []release.LabelLike, error) {
	if in.Value != nil {
		return nil, nil, refuseKey("in", "%s holds conversion values (a float %q column): privatize serves labels that are classes; "+
			"release values inside train run/fit/sweep (docs/values.md)", o.In, data.ColLabel)
	}
	if in.Label == nil {
		return nil, nil, fmt.Errorf("privatize: %s has no %q column", o.In, data.ColLabel)
	}
	if c := in.NumClasses(); c >= 3 { // the file's classes decide (its labels were checked below C when read)
		p.Classes = c
		var err error
		if m, err = pets.New(p); err != nil {
			return nil, nil, fmt.Errorf("privatize: %s has labels of %d classes: %w", o.In, c, paramField(err))
		}
	}
	prog.Unit(fmt.Sprintf("checking %d rows' features", in.Rows), 0)
	if err := checkFinite(o.In, in); err != nil {
		return nil, nil, err
	}
	allowed, err := checkLabelLike(o.In, in, o.AllowLabelLike)
	if err != nil {
		return nil, nil, err
	}
	return m, allowed, nil
}

// applyRelease releases in's labels through m (crypto/rand noise, or
// seeded by o.Seed) and fills the ledger entry: paths, label digest and
// key check, identity rule and id column, and the people of the rows the
// release covers.
func applyRelease(o PrivatizeOptions, in *data.Frame, ids *data.IDs, m *pets.Mechanism, keys *ledger.Keys,
	rule ledger.Identity, col ledger.IDColumn, prog *meter) (*release.Release, ledger.Release, error) {
	opts := release.Options{Noise: pets.NoiseSecure, KeepRemainder: o.KeepRemainder}
	var seed uint64
	if o.Seed != nil {
		seed = *o.Seed
		opts.Noise, opts.Seed = pets.NoiseSeeded, seed
	}
	prog.Unit("releasing the labels through "+m.String(), 0)
	rel, err := release.Apply(in.Label, m, opts)
	if err != nil {
		return nil, ledger.Release{}, err
	}
	absOut, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, ledger.Release{}, err
	}
	entry := rel.Entry(absOut, seed)
	entry.Input, _ = filepath.Abs(o.In)
	entry.Labels, entry.KeyCheck, entry.Identity, entry.IDColumn = keys.Labels(in.Label), keys.Check(), rule, col
	prog.Unit("keying rows to their people", 0)
	prog.Pass("rows", in.Rows)
	entry.People = personKeysCounted(keys, in, ids, rule, prog.Done)
	if !rel.InOrder() { // else every row, in order: the keys as they are (no 8 bytes a row twice more)
		entry.People = coveredPeople(entry.People, rel.Covered())
	}
	prog.Pass("", 0)
	return rel, entry, nil
}

// releaseMeta is the release file's metadata: rel's, the ledger row
// that charges it (its id and tag) and the label-like columns allowed.
func releaseMeta(rel *release.Release, entry ledger.Release, keys *ledger.Keys, allowed []release.LabelLike) map[string]string {
	md := rel.Meta()
	md[MetaLedgerRelease], md[MetaLedgerTag] = entry.ID, keys.ReleaseTag(entry.ID)
	if len(allowed) > 0 {
		md[MetaLabelLike] = labelLikeMeta(allowed)
	}
	return md
}

// privatizeWarnings are what the user of the release at out should know:
// each label-like column shipped, and a δ' above 1/people.
func privatizeWarnings(out string, allowed []release.LabelLike, row ledger.Row) []string {
	var w []string
	for _, a := range allowed {
		w = append(w, fmt.Sprintf("LABEL-LIKE COLUMN SHIPPED: %s. It is in %s as it is, so whoever holds the file "+
			"reads the labels off it, whatever the mechanism and the ε the ledger charged; it was named to be shipped (allow_label_like), "+
			"and the file's metadata records it (%s)", a, out, MetaLabelLike))
	}
	if row.DeltaPrime > 1/float64(row.People) {
		w = append(w, fmt.Sprintf("the ledger's δ' = %g is above 1/%d (one over the people of this release): "+
			"a guarantee that fails with probability δ' may then fail for a whole person; keep δ' well below 1/people "+
			"(a new ledger with a smaller `delta_prime`)", row.DeltaPrime, row.People))
	}
	return w
}

// afterInputRead runs between reading privatize's input and checking it
// is unchanged (tests rewrite the file there).
var afterInputRead = func() {}

// readInput reads privatize's input with its id column, verified against
// the SHA-256 its dataset's meta.json records before the read (as opening
// a dataset does) and unchanged after it: a file rewritten while it is
// read would ship rows that exist in neither version.
func readInput(path, idCol string) (*data.Frame, *data.IDs, error) {
	chk, err := data.VerifyFile(path)
	if err != nil {
		return nil, nil, err
	}
	in, ids, err := data.ReadFrameWithIDs(path, idCol)
	if err != nil {
		return nil, nil, err
	}
	afterInputRead()
	if chk != nil {
		if err := chk.Recheck(); err != nil {
			return nil, nil, err
		}
	}
	return in, ids, nil
}

// SeedWarning is what `train privatize --seed` warns of.
func SeedWarning(seed uint64) string {
	return fmt.Sprintf("--seed %d makes this release reproducible: anyone who learns or guesses the seed can regenerate its noise "+
		"and recover the labels. Do not let it leave the machine; drop --seed for a crypto/rand release.", seed)
}

// Summary says in words what was published and what the ledger now
// guarantees: the lines `train privatize` prints.
func (p *Privatized) Summary() string {
	r, e := p.Release, p.Entry
	var b strings.Builder
	fmt.Fprintf(&b, "privatize: wrote %s (%s, %s", p.Path, r.Mech, english.Count(r.Rows(), "row"))
	if r.Mech.Kind().IsLLP() {
		fmt.Fprintf(&b, ", %s, %s dropped", english.Count(r.Bags, "bag"), english.Count(r.Dropped, "row"))
	}
	fmt.Fprintf(&b, ", noise %s)\nprivatize: ledger %s: %d people covered; the most charged (%d) carry ε = %.4g "+
		"at δ'=%g over %s (basic %.4g, DRV %.4g, PLD %.4g)\n",
		r.Noise, p.Ledger, e.People, e.PeopleAtWorst, e.EpsTotal, e.DeltaPrime, english.Count(e.Releases, "release"),
		e.EpsTotalBasic, e.EpsTotalDRV, e.EpsTotalPLD)
	return b.String()
}

// checkFinite refuses NaN or ±Inf features (every importer refuses them;
// a file written otherwise would carry them into a release).
func checkFinite(path string, f *data.Frame) error {
	d := f.Dim()
	for i, v := range f.X {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return refuseKey("in", "%s row %d: feature %q is %v: features must be finite (every importer refuses them; "+
				"fix or drop the row, e.g. train data import --drop-invalid)", path, i/d, f.Features[i%d], v)
		}
	}
	return nil
}

// The release metadata keys naming the ledger row that charged a release
// (`train ledger --check FILE` looks it up): the release id, 128 bits from
// crypto/rand drawn apart from the data, and its tag, an HMAC under the
// ledger's key of that id alone (ledger.Keys.ReleaseTag). Neither depends
// on the labels or the features, so they tell whoever holds the file
// nothing about them; with the key, the tag shows the file was recorded by
// that ledger, so a ledger that lacks the id was rolled back.
const (
	MetaLedgerRelease = "ledger_release_id"
	MetaLedgerTag     = "ledger_release_tag"
)

// MetaLabelLike is the release metadata key listing the label-like feature
// columns shipped by `allow_label_like` (a JSON array of their names).
const MetaLabelLike = "label_like_columns_allowed"

// checkLabelLike refuses a release whose features give its labels away
// (release.LabelLikeColumns), naming every such column in one line, unless
// allow names it; it returns those allowed. A name in allow that is no
// feature column of f is refused (a typo would let the column through
// unnoticed in a later file).
func checkLabelLike(path string, f *data.Frame, allow []string) ([]release.LabelLike, error) {
	for _, a := range allow {
		if !slices.Contains(f.Features, a) {
			return nil, refuseKey("allow_label_like", "%q is not a feature column of %s (its features: %q)", a, path, f.Features)
		}
	}
	var refused []string
	var allowed []release.LabelLike
	for _, l := range release.LabelLikeColumns(f) {
		if slices.Contains(allow, l.Column) {
			allowed = append(allowed, l)
		} else {
			refused = append(refused, l.String())
		}
	}
	if len(refused) > 0 {
		n := len(refused)
		return nil, refuseKey("in", "%s: label-like feature %s %s: the release would ship %s as it is, so whoever holds the file reads "+
			"the labels off it whatever the mechanism, while the ledger charges its ε; drop %s from the file, or name it with "+
			"`allow_label_like` to ship it anyway", path, english.Noun(n, "column", "columns"), strings.Join(refused, "; "),
			english.Noun(n, "it", "each"), english.Noun(n, "the column", "each"))
	}
	return allowed, nil
}

// labelLikeMeta is MetaLabelLike's value: the allowed columns' names.
func labelLikeMeta(allowed []release.LabelLike) string {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = a.Column
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// checkOldLedger refuses the default ledger while a ledger sits beside the
// input, where earlier versions kept it: the people recorded there would
// not be counted in the default one.
func checkOldLedger(in, defaultLedger string) error {
	for _, p := range []string{in, realPath(in)} {
		old := filepath.Join(filepath.Dir(p), ledger.File)
		if fileExists(old) && !sameFile(old, defaultLedger) {
			return refuseKey("ledger", "a privacy ledger %s sits beside `in`, where earlier versions kept it; the default ledger is now "+
				"%s (one per user, so that copies and re-imports of the same people compose), which does not count the "+
				"releases recorded there. Name the ledger to use with `ledger`", old, defaultLedger)
		}
	}
	return nil
}

// removeDeadTemps removes the temporaries that killed writers (of this
// host, dead) left beside the releases the ledger names: a release killed
// after its row was recorded and before its file was renamed into place.
func removeDeadTemps(l *ledger.Ledger) {
	rows, err := l.Rows()
	if err != nil {
		return
	}
	var paths []string
	for _, r := range rows {
		if r.Noise != pets.NoiseSimulation && filepath.IsAbs(r.Path) {
			paths = append(paths, r.Path)
		}
	}
	atomicfile.RemoveStaleFor(paths)
}

// checkOut refuses an out that would destroy data or ship the ledger.
// Paths are compared after following links.
func checkOut(in, out, ledgerPath string, force bool) error {
	absIn, err := filepath.Abs(in)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	outDir := realPath(filepath.Dir(absOut))
	ledgerDir := realPath(filepath.Dir(ledgerPath))
	stIn, inErr := os.Stat(absIn)
	stOut, outErr := os.Lstat(absOut)
	switch {
	case absIn == absOut || (inErr == nil && outErr == nil && os.SameFile(stIn, stOut)):
		return refuse("%s is the input `in` %s: privatize never overwrites its input", out, in)
	}
	if ds := datasetAbove(outDir); ds != "" {
		return refuse("%s is in the dataset directory %s (it holds %s): privatize never writes into a dataset; "+
			"write the release to a folder of its own", out, ds, data.MetaFile)
	}
	switch {
	case isUnder(outDir, ledgerDir):
		return refuse("%s is in the folder of the privacy ledger %s: the ledger and its key would ship with the "+
			"release; write the release to a folder of its own (or keep the ledger elsewhere with `ledger`)", out, ledgerPath)
	case isUnder(ledgerDir, outDir):
		return refuse("the privacy ledger %s lies under the folder of `out` %s: the ledger and its key would ship with the "+
			"release (whoever holds both recovers the labels); keep the ledger outside the folder you ship", ledgerPath, filepath.Dir(out))
	}
	for _, name := range []string{ledger.File, strings.TrimSuffix(ledger.File, ".csv") + ".key"} {
		if fileExists(filepath.Join(outDir, name)) {
			return refuse("%s is in a folder that holds a privacy ledger's file (%s): it would ship with the release; "+
				"move the ledger next to the raw data (and name it with `ledger`) or write the release elsewhere",
				out, filepath.Join(filepath.Dir(out), name))
		}
	}
	ext := strings.ToLower(filepath.Ext(out))
	okExt := false
	for _, e := range releaseExts {
		okExt = okExt || ext == e
	}
	if !okExt {
		return refuse("%s: privatize writes Arrow IPC files; name it .arrow (or .feather, .ipc); "+
			"it does not write Parquet (pyarrow converts: pq.write_table(pa.ipc.open_file(f).read_all(), …))", out)
	}
	switch {
	case outErr == nil && !stOut.Mode().IsRegular():
		return refuse("%s exists and is not a regular file", out)
	case outErr == nil && !force:
		return refuse("%s exists: privatize never replaces a file unless `force` is given", out)
	case outErr != nil && !errors.Is(outErr, fs.ErrNotExist):
		return &config.FieldError{Key: "out", Msg: outErr.Error()}
	}
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// realPath returns p absolute with every link of its longest existing
// prefix followed (the rest, not yet created, appended as is).
func realPath(p string) string {
	p, _ = filepath.Abs(p)
	var rest []string
	for d := p; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r
		}
		if filepath.Dir(d) == d {
			return p
		}
		rest = append(rest, filepath.Base(d))
	}
}

// isUnder reports whether the directory child is dir or lies below it
// (both real paths; directories compared by identity too, so a bind mount
// or a second name counts).
func isUnder(child, dir string) bool {
	sd, errD := os.Stat(dir)
	for d := child; ; d = filepath.Dir(d) {
		if d == dir {
			return true
		}
		if errD == nil {
			if sc, err := os.Stat(d); err == nil && os.SameFile(sc, sd) {
				return true
			}
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// datasetAbove returns the dataset directory (one whose meta.json is a
// dataset's) that dir is or lies below, or "".
func datasetAbove(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, data.MetaFile)) {
			if _, err := data.ReadMeta(d); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// paramField turns a mechanism parameter error into a *config.FieldError naming
// the parameter ("epsilon", "k", "mechanism"), so a caller can name its
// own flag or key.
func paramField(err error) error {
	var pe *pets.ParamError
	if errors.As(err, &pe) {
		key := pe.Param
		if key == "kind" || key == "secure" {
			key = "mechanism"
		}
		return &config.FieldError{Key: key, Msg: pe.Msg}
	}
	return err
}
