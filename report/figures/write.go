package figures

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"labelprivacy/internal/atomicfile"
	"labelprivacy/report"
)

// ErrNoData is returned (wrapped) by the figure builders when their input
// has nothing to draw. Nothing is written in that case; WritePlots and
// WriteAuditPlots skip such figures.
var ErrNoData = errors.New("figures: no data to plot")

// ---- the report's figures -------------------------------------------------------------

// figureJob is one figure of WritePlots. Its title and caption are
// written for binary labels; forClasses rewords them for C ≥ 3 classes.
type figureJob struct {
	name, title, caption string
	build                func(sets []Set) (*figure, error)
}

// forClasses returns the job's title and caption for labels of C classes:
// as written for binary labels; for C ≥ 3 with test accuracy where they
// say test AUC, the prior and posterior of the drawn label, and C in the
// title.
func (j figureJob) forClasses(classes int) (title, caption string) {
	if classes < 3 {
		return j.title, j.caption
	}
	r := strings.NewReplacer(multiclassWording...)
	return r.Replace(j.title) + report.ClassesTitle(classes), r.Replace(j.caption)
}

// multiclassWording are the (binary wording, C-class wording) pairs of the
// figures' titles and captions.
var multiclassWording = []string{
	"Test AUC", "Test accuracy",
	"test AUC", "test accuracy",
	"P(y=1 | x, release)", "P(y | x, release) of the drawn label y",
	"the prior η(x)", "the prior η_y(x) of that label",
	"posteriors of 0 or 1 expose the label", "a posterior of 1 exposes the label, 0 rules it out",
	"|multiplicative advantage|", "|multiplicative advantage| (the largest change of the log posterior odds between two classes)",
	"more than 2% of labels fully exposed, e.g. LLP with homogeneous bags", "for more than 2% of examples the release rules a class out, e.g. an LLP bag's count of 0 for a class",
}

// crowdCaption is the captions' sentence on crowded grids and markers.
const crowdCaption = " No marker leaves its measured value: one that would hide another moves along a parameter axis only " +
	"(ε, k; a hairline joins it to its place) or, where both axes are measured, stays put and is drawn open (a ring around the other)."

var figureJobs = []figureJob{
	{"auc_by_setting", "Test AUC per privacy setting",
		"What each mechanism costs: mean test AUC of the best learning rate (± SE over trials) per setting, one panel " +
			"per mechanism against its parameter (LLP+Lap and LLP+Geom: one curve per k, each its own colour). Dashed: the model trained on " +
			"clean labels; dotted, when in the grid: bot (nothing released). Drawn with or without audit results. Several result " +
			"sets (a comparison, --allow-mixed) are overlaid: the last solid with filled markers, the others dashed with open ones." + crowdCaption,
		func(sets []Set) (*figure, error) { return aucBySettingSets(sets, "") }},
	{"auc_vs_eadv", "Test AUC vs expected additive advantage",
		"Paper Fig. 3. One point per audited setting: x = expected additive advantage of the Bayes-optimal attacker " +
			"(± SE of the audit), y = mean test AUC of the best learning rate (± SE over trials). RR varies ε, LLP varies " +
			"k, LLP+Lap/LLP+Geom have one curve per k across ε. Dashed line: the model trained on clean labels. When the " +
			"advantages span more than 1.5 decades the x axis is symlog (linear below the value it names, logarithmic above); " +
			"a grid of more than 6 curves or 24 settings gets one panel per mechanism, the others' settings as grey dots. " +
			"Several result sets are overlaid as in the figure above." + crowdCaption,
		func(sets []Set) (*figure, error) { return aucVsAdvSets(sets, metricEAdv, "") }},
	{"auc_vs_ma_p98", "Test AUC vs 98th-percentile multiplicative advantage",
		"Paper Fig. 3. As above with x = 98th percentile of |multiplicative advantage| (nats, log(1+x) axis). " +
			"Settings whose 98th percentile is infinite (more than 2% of labels fully exposed, e.g. LLP with " +
			"homogeneous bags) are drawn at the position marked ∞, right of the dashed separator.",
		func(sets []Set) (*figure, error) { return aucVsAdvSets(sets, metricMAP98, "") }},
	{"posterior_scatter", "Prior vs posterior",
		"Paper Figs. 1–2 (top). One point per sampled example: the attacker's posterior P(y=1 | x, release) " +
			"against the prior η(x). Points on y = x reveal nothing; posteriors of 0 or 1 expose the label. A panel shows at " +
			"most 4 settings (the first and last in (k, ε) order and evenly spaced ones between, named in its title when some " +
			"are left out), each in its own colour and marker.",
		func(sets []Set) (*figure, error) { return scatterSets(sets, "") }},
	{"advantage_cdfs", "CDFs of per-example advantage",
		"Paper Fig. 2 (middle, bottom). Empirical CDFs of the individual expected advantage and of " +
			"|multiplicative advantage| over the posterior samples; infinite values jump to 1 at the ∞ position, and the " +
			"legend's % ∞ is the audit's (all its examples, as in the table). More than 6 settings: one row per mechanism, at " +
			"most 4 settings a row (picked as in the scatter). The advantage axis is symlog when it spans decades.",
		func(sets []Set) (*figure, error) { return cdfSets(sets, "") }},
}

// WritePlots writes the report's figures into dir, each as NAME.png (120
// dpi) and NAME.svg, and returns them for WriteMarkdown, in this order:
//
//	auc_by_setting     test AUC per setting, one panel per mechanism (no audit needed)
//	auc_vs_eadv        paper Fig. 3, x = expected additive advantage
//	auc_vs_ma_p98      paper Fig. 3, x = 98th-percentile |multiplicative advantage|
//	posterior_scatter  paper Figs. 1–2, prior vs posterior per example
//	advantage_cdfs     paper Fig. 2, CDFs of per-example advantages
//
// A figure with nothing to draw (e.g. no audit yet, no posteriors) is
// skipped. A summary of several (dataset, config) groups (AllowMixed) is
// drawn as one set per group, overlaid in each figure (GroupSets); the
// posteriors of a group are those of its dataset and config (posteriors
// without a dataset or config belong to a summary's only one).
func WritePlots(dir string, s *report.Summary, post []report.Posterior) ([]report.Figure, error) {
	return WriteSets(dir, GroupSets(s, post))
}

// GroupSets splits a summary and its posteriors into one Set per (dataset,
// config) group, in the summary's order, each named by what sets it apart:
// its config's name and the keys it differs in (Row.ConfigDiff), and its
// dataset when the summary has several; "" for a summary of one group.
func GroupSets(s *report.Summary, post []report.Posterior) []Set {
	type group struct{ dataset, config string }
	var groups []group
	rows := map[group][]report.Row{}
	for _, r := range s.Rows {
		g := group{r.Dataset, r.ConfigID}
		if _, ok := rows[g]; !ok {
			groups = append(groups, g)
		}
		rows[g] = append(rows[g], r)
	}
	var sets []Set
	names := map[string]int{}
	for _, g := range groups {
		var gp []report.Posterior
		for _, p := range post {
			if (p.Dataset == g.dataset || p.Dataset == "" && len(s.Datasets) == 1) &&
				(p.ConfigID == g.config || p.ConfigID == "" && len(s.Configs) == 1) {
				gp = append(gp, p)
			}
		}
		set := Set{Rows: rows[g], Posteriors: gp}
		if len(groups) > 1 {
			r := rows[g][0]
			name := r.ConfigName
			if name == "" {
				name = "config " + g.config
			}
			if r.ConfigDiff != "" {
				name += " (" + strings.ReplaceAll(r.ConfigDiff, "; ", ", ") + ")"
			}
			if len(s.Datasets) > 1 {
				name += ", dataset " + g.dataset
			}
			names[name]++
			if names[name] > 1 {
				name += fmt.Sprintf(" #%d", names[name])
			}
			set.Name = name
		}
		sets = append(sets, set)
	}
	return sets
}

// WriteSets writes the report's figures (WritePlots) for result sets drawn
// together: one set, a comparison's two sides (A first, B last: B is drawn
// solid), or the groups of a mixed summary. Sets of different label class
// counts are an error (setsClasses); for C ≥ 3 classes every figure plots
// test accuracy where it plots test AUC for binary labels, and says C in
// its title.
func WriteSets(dir string, sets []Set) ([]report.Figure, error) {
	classes, err := setsClasses(sets)
	if err != nil {
		return nil, err
	}
	var figs []report.Figure
	for _, j := range figureJobs {
		f, err := j.build(sets)
		if errors.Is(err, ErrNoData) {
			continue
		}
		if err != nil {
			return figs, err
		}
		base := filepath.Join(dir, j.name)
		if err := saveFigure(base, f); err != nil {
			return figs, err
		}
		title, caption := j.forClasses(classes)
		figs = append(figs, report.Figure{Path: base + ".png", Title: title, Caption: caption})
	}
	return figs, nil
}

// ---- rendering to files ------------------------------------------------------

// saveFigure renders f as pathNoExt.png (pngDPI) and pathNoExt.svg, each
// written atomically (the directory is created).
func saveFigure(pathNoExt string, f *figure) error {
	w, h := f.size()
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(img))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return fmt.Errorf("figures: %s.png: %w", pathNoExt, err)
	}
	if err := atomicfile.WriteFile(pathNoExt+".png", buf.Bytes()); err != nil {
		return err
	}
	svg, err := renderSVG(f)
	if err != nil {
		return fmt.Errorf("figures: %s.svg: %w", pathNoExt, err)
	}
	return atomicfile.WriteFile(pathNoExt+".svg", svg)
}

// renderSVG draws f as an SVG document on a white background: text, so
// the same figure gives the same bytes (the golden digests of the tests).
func renderSVG(f *figure) ([]byte, error) {
	w, h := f.size()
	svg := vgsvg.New(w, h)
	c := draw.New(svg)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	f.draw(c)
	var buf bytes.Buffer
	if _, err := svg.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
