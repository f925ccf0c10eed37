package figures

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"path/filepath"

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

// figureJob is one figure of WritePlots.
type figureJob struct {
	name, title, caption string
	build                func(rows []report.Row, post []report.Posterior, suffix string) (*figure, error)
}

var figureJobs = []figureJob{
	{"auc_by_setting", "Test AUC per privacy setting",
		"What each mechanism costs: mean test AUC of the best learning rate (± SE over trials) per setting, one panel " +
			"per mechanism against its parameter (LLP+Lap and LLP+Geom: one curve per k). Dashed: the model trained on " +
			"clean labels; dotted, when in the grid: bot (nothing released). Drawn with or without audit results.",
		func(rows []report.Row, _ []report.Posterior, sfx string) (*figure, error) {
			return aucBySettingFigure(rows, sfx)
		}},
	{"auc_vs_eadv", "Test AUC vs expected additive advantage",
		"Paper Fig. 3. One point per audited setting: x = expected additive advantage of the Bayes-optimal attacker " +
			"(± SE of the audit), y = mean test AUC of the best learning rate (± SE over trials). RR varies ε, LLP varies " +
			"k, LLP+Lap/LLP+Geom have one curve per k across ε. Dashed line: the model trained on clean labels.",
		func(rows []report.Row, _ []report.Posterior, sfx string) (*figure, error) {
			return aucVsAdvFigure(rows, metricEAdv, sfx)
		}},
	{"auc_vs_ma_p98", "Test AUC vs 98th-percentile multiplicative advantage",
		"Paper Fig. 3. As above with x = 98th percentile of |multiplicative advantage| (nats, log(1+x) axis). " +
			"Settings whose 98th percentile is infinite (more than 2% of labels fully exposed, e.g. LLP with " +
			"homogeneous bags) are drawn at the position marked ∞, right of the dashed separator.",
		func(rows []report.Row, _ []report.Posterior, sfx string) (*figure, error) {
			return aucVsAdvFigure(rows, metricMAP98, sfx)
		}},
	{"posterior_scatter", "Prior vs posterior",
		"Paper Figs. 1–2 (top). One point per sampled example: the attacker's posterior P(y=1 | x, release) " +
			"against the prior η(x). Points on y = x reveal nothing; posteriors of 0 or 1 expose the label.",
		func(_ []report.Row, post []report.Posterior, sfx string) (*figure, error) {
			return scatterFigure(post, sfx)
		}},
	{"advantage_cdfs", "CDFs of per-example advantage",
		"Paper Fig. 2 (middle, bottom). Empirical CDFs of the individual expected advantage and of " +
			"|multiplicative advantage|; infinite values jump to 1 at the ∞ position.",
		func(_ []report.Row, post []report.Posterior, sfx string) (*figure, error) {
			return cdfFigure(post, sfx)
		}},
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
// skipped. A summary of several (dataset, config) groups gets one set of
// figures per group, NAME_1, NAME_2, … in the summary's order, each titled
// with its dataset and config; the posteriors of a group are those of its
// dataset and config (posteriors without a dataset or config belong to a
// summary's only one).
func WritePlots(dir string, s *report.Summary, post []report.Posterior) ([]report.Figure, error) {
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
	var figs []report.Figure
	for gi, g := range groups {
		suffix, titleSuffix := "", ""
		if len(groups) > 1 {
			suffix = fmt.Sprintf("_%d", gi+1)
			titleSuffix = fmt.Sprintf(" — group %d: dataset %s, config %s", gi+1, g.dataset, g.config)
		}
		var gp []report.Posterior
		for _, p := range post {
			if (p.Dataset == g.dataset || p.Dataset == "" && len(s.Datasets) == 1) &&
				(p.ConfigID == g.config || p.ConfigID == "" && len(s.Configs) == 1) {
				gp = append(gp, p)
			}
		}
		for _, j := range figureJobs {
			f, err := j.build(rows[g], gp, titleSuffix)
			if errors.Is(err, ErrNoData) {
				continue
			}
			if err != nil {
				return figs, err
			}
			base := filepath.Join(dir, j.name+suffix)
			if err := saveFigure(base, f); err != nil {
				return figs, err
			}
			figs = append(figs, report.Figure{Path: base + ".png", Title: j.title + titleSuffix, Caption: j.caption})
		}
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
	svg := vgsvg.New(w, h)
	c := draw.New(svg)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	f.draw(c)
	buf.Reset()
	if _, err := svg.WriteTo(&buf); err != nil {
		return fmt.Errorf("figures: %s.svg: %w", pathNoExt, err)
	}
	return atomicfile.WriteFile(pathNoExt+".svg", buf.Bytes())
}
