package pets

// A mechanism is one value. Each kind of mechanism is one type in one file
// of this package (none.go, bot.go, rr.go, rrprior.go, llp.go, llplap.go,
// llpgeom.go, araevent.go, arasummary.go) that implements Scheme and registers itself with its Kind
// constant (builtin, kind.go), or one Register call from outside; the rest
// of the program asks a Kind's Spec, or a Mechanism's law, what it needs
// (parameters, release, training plan, audit law, privacy, look) instead
// of switching on the kind. The answers are in this package's own
// vocabulary (Release, Target, Loss, Look, Channel, Form, SumNoise): the
// packages above serve its values (server.go) and map them to theirs.

// Scheme is one kind of label mechanism.
type Scheme interface {
	// Spec returns what the kind is; it never changes.
	Spec() Spec
	// Law validates the parameters that Spec's Takes does not cover
	// (New has checked that p takes exactly the parameters Takes lists,
	// ε's range and the classes) and returns the law of the mechanism with
	// them on C = max(p.Classes, 2) classes (Law.Classes() == C): an
	// ExampleLaw when Spec.Release is one label per example (ReleaseRaw,
	// ReleaseNothing, ReleaseLabels, ReleaseLabelsWithPrior), a BagLaw when
	// it is proportions (ReleaseBags, ReleaseCounts). Errors are
	// *ParamError.
	Law(p Params) (Law, error)
}

// Kind identifies a label privacy mechanism: its place in the registry,
// whose Scheme answers everything about it (Spec). Each built-in kind is
// one file of this package that declares its constant and registers its
// Scheme (builtin); the values are fixed and give the canonical order of
// tables and figures: None, Bot, RR, LLP, LLPLap, LLPGeom, RRPrior,
// ARAEvent, ARASummary. Kinds
// registered later (Register) follow, in registration order, which may
// differ from one process to the next: files store a kind's name, never
// its value (CompareSteps orders them the same way everywhere).
type Kind uint8

// Params configures a mechanism. Fields a kind does not take must be left
// zero: New rejects them rather than silently ignoring them.
type Params struct {
	Kind Kind
	// K is the bag size (llp, llp_lap, llp_geom), ≥ 1.
	K int
	// Epsilon is the label-DP parameter ε (rr, llp_lap, llp_geom,
	// rr_prior), in (0, MaxEpsilon].
	Epsilon float64
	// Secure selects, for llp_lap, the grid Laplace sampler SecureLaplace
	// (robust to the floating-point attack) instead of the textbook Laplace.
	// rr and llp_geom always use exact samplers, so it changes nothing for
	// them; it is rejected for none, bot and llp, which add no noise. Pair it
	// with NewSecureRand for deployment.
	Secure bool
	// Classes is the number of label classes C the mechanism releases
	// (labels 0..C−1): 0 or 2 for binary labels (the paper's), 3..MaxClasses
	// for a kind that takes classes (Takes.Classes), whose Scheme.Law is
	// then its law on C classes (k-ary RR, RRWithPrior, bags of class
	// counts for the built-in kinds). The dataset decides it, not the
	// config.
	Classes int
	// Values is the grid of conversion values a kind that takes values
	// (Takes.Values) releases: the dataset's value_max and value_step. The
	// zero Grid for labels that are classes; New refuses a grid for a kind
	// that does not take values, and a kind that takes only values without
	// one. The dataset decides it, not the config.
	Values Grid
	// PriorEpsilon is rr_bins's ε₁ for a private prior (value_prior, a
	// noisy histogram of the training values), in (0, Epsilon): the bins
	// get Epsilon − ε₁. 0: the prior is public.
	PriorEpsilon float64
	// TriggerData, Windows and Reports (ara_event, Takes.Source): an
	// event-level attribution source of T trigger-data values, W reporting
	// windows and at most R reports (package ara's Uniform(T, W, R)); its
	// labels are the 1 + T·W conversion outcomes of data synth --kind
	// conversions.
	TriggerData, Windows, Reports int
	// CountShare and ValueShare (ara_summary, Takes.Shares): the shares of
	// a source's contribution budget (L1 = 65,536) given to the
	// conversion count and to the conversion value, each in [0, 1], their
	// sum at most 1 (budget_share: {count: …, value: …}).
	CountShare, ValueShare float64
}

// Spec is what a kind of mechanism is, for the rest of the program.
type Spec struct {
	// Name is the canonical name in configs, setting ids, tables, release
	// metadata and the ledger ("rr").
	Name string
	// Takes lists its parameters.
	Takes Takes
	// Privacy says what label-DP ε one release has.
	Privacy Privacy
	// Release is what a release shows and which columns it writes.
	Release Release
	// Train is how a model learns from the release.
	Train Train
	// Look is how tables and figures show it.
	Look Look
}

// Takes lists the parameters of a kind. New rejects a parameter a kind
// does not take rather than ignoring it.
type Takes struct {
	K bool // a bag size k ≥ 1
	// Epsilon: a label-DP ε in (0, MaxEpsilon], and Params.Secure (a
	// sampler that resists the floating-point attack where the kind needs
	// one; the others sample exactly anyway).
	Epsilon bool
	// Classes: labels of C ≥ 3 classes (Params.Classes), released by the
	// law its Scheme returns for them. Every built-in kind but ara_summary
	// takes them; New
	// refuses C ≥ 3 for a kind that does not, naming "classes".
	Classes bool
	// Values: conversion values on a grid (Params.Values), released by
	// the ValueLaw its Scheme returns for them. A kind may take values
	// only (laplace, rr_bins, value_bags) or classes and values (none,
	// bot).
	Values bool
	// OptionalEpsilon (with Epsilon): ε may be left out (0), and the
	// release is then exact and not DP (value_bags: exact bag means,
	// Epsilon() +Inf, like llp).
	OptionalEpsilon bool
	// Source: an attribution source's event-level configuration
	// (Params.TriggerData, Windows, Reports; ara_event).
	Source bool
	// Shares: the split of a summary report's contribution budget
	// (Params.CountShare, ValueShare; ara_summary).
	Shares bool
	// KeyGroups: it releases one value per group of rows sharing a key
	// (bags formed by a key column, whole, whatever their size; the
	// caller forms them), with no bag size (ara_summary).
	KeyGroups bool
	// ValuePrior (with Values): a prior over the grid that shapes the
	// release (rr_bins' bins): public (a config's prior) or private
	// (Params.PriorEpsilon, ε₁ of its noisy histogram, PriorStage); the
	// release's bins are Mechanism.Bins of it.
	ValuePrior bool
}

// Privacy is the label-DP ε of one release (Definition 2.1) and how
// releases compose in a person's history (Compose, the ledger's charge).
type Privacy uint8

const (
	// NotDP: ε = +Inf (none reveals every label, llp homogeneous bags);
	// nothing composed with it is bounded.
	NotDP Privacy = iota
	// Silent: ε = 0 (bot releases nothing about the labels); adds nothing.
	Silent
	// DPRR: ε-label-DP at Params.Epsilon, composed through the privacy
	// loss of RR(ε), which dominates every pure ε-DP pair (Kairouz, Oh &
	// Viswanath 2015, Theorem 2.1): rr, rr_prior, llp_geom.
	DPRR
	// DPLaplace: ε-label-DP at Params.Epsilon with the Laplace
	// mechanism's privacy loss (llp_lap), composed through its own PLD.
	// On C ≥ 3 classes one label moves two counts, each under Laplace noise
	// of rate ε/2: that pair of losses is dominated by one Laplace(ε) loss
	// (TestMulticlassLaplaceComposesAsBinary), so the same PLD bounds it.
	DPLaplace
)

// DP reports whether a release has a finite ε.
func (p Privacy) DP() bool { return p == Silent || p == DPRR || p == DPLaplace }

// Release is the shape of what a release shows.
type Release uint8

const (
	// ReleaseRaw: the raw labels, which never leave as a release (none:
	// the clean model trains on the dataset's own label column).
	ReleaseRaw Release = iota
	// ReleaseNothing: rows without a label column (bot).
	ReleaseNothing
	// ReleaseLabels: one released label per row (column label_rr).
	ReleaseLabels
	// ReleaseLabelsWithPrior: one released label per row, each through
	// the channel its public prior chooses (label_rr with prior, branch
	// and stage): released in two stages, the first through the prior ½,
	// the second through the priors of a model trained on the first.
	ReleaseLabelsWithPrior
	// ReleaseBags: one proportion per bag of k rows, or per key group for a
	// kind that takes KeyGroups (bag_id, alpha, and
	// alpha_debiased when Train.Target is TargetAlphaDebiased), drawn
	// through the kind's BagLaw from the bag's class counts.
	ReleaseBags
	// ReleaseCounts: per example, no bag: the label's one-hot count vector
	// through the kind's BagLaw as a bag of one (alpha: classes 1..C−1),
	// rows in input order (an ALIBI-like noisy soft label).
	ReleaseCounts
	// ReleaseValues: one released conversion value per row (column
	// value_rr) through the kind's ValueLaw (laplace, rr_bins), rows in
	// input order.
	ReleaseValues
	// ReleaseValueBags: one released mean value per bag of k rows (bag_id,
	// bag_mean) through the kind's ValueLaw (value_bags).
	ReleaseValueBags
	// ReleaseHistogram: one noisy histogram of a dataset's values over the
	// grid, no row columns (value_prior: rr_bins's private prior, never a
	// setting of its own).
	ReleaseHistogram
)

// PerBag reports whether the release is one value per bag (the LLP
// family, value_bags).
func (r Release) PerBag() bool { return r == ReleaseBags || r == ReleaseValueBags }

// OfValues reports whether the release is of conversion values (a kind's
// ValueLaw), not of classes.
func (r Release) OfValues() bool {
	return r == ReleaseValues || r == ReleaseValueBags || r == ReleaseHistogram
}

// Proportions reports whether the release is proportions drawn through a
// BagLaw (ReleaseBags, ReleaseCounts), not one label per example through
// an ExampleLaw.
func (r Release) Proportions() bool { return r == ReleaseBags || r == ReleaseCounts }

// Written reports whether a release is made and written at all (not for
// ReleaseRaw, and not ReleaseNothing, which writes no label column and
// trains nothing).
func (r Release) Written() bool { return r != ReleaseRaw && r != ReleaseNothing }

// WithPrior reports whether each example's release depends on a public
// prior (ReleaseLabelsWithPrior).
func (r Release) WithPrior() bool { return r == ReleaseLabelsWithPrior }

// Train is how a model learns from a kind's release (Section 4,
// Appendix C).
type Train struct {
	// Loss is the family of the training loss; LossNone: nothing is
	// trained (a constant predictor).
	Loss Loss
	// Target is the column the targets come from.
	Target Target
}

// Loss is a family of training losses; the pipeline picks the member
// (train.rr_loss, train.llp_loss).
type Loss uint8

const (
	LossNone Loss = iota // nothing trained
	// LossBCE: per-example binary cross-entropy on the target as it is
	// (none's clean label, rr_prior's soft targets).
	LossBCE
	// LossFlipped: per-example, on labels flipped with the mechanism's
	// FlipProb π: train.rr_loss (BCE, or BCE debiased with π).
	LossFlipped
	// LossProportion: per bag, on its (noisy) label proportion:
	// train.llp_loss (PropMatch, EasyLLP, ...).
	LossProportion
	// LossSquared: per example, squared loss of an identity head on the
	// released value (laplace, rr_bins): model loss mse.
	LossSquared
	// LossBagSquared: per bag, squared loss of the bag's mean predicted
	// value on its released mean (value_bags): model loss bag_mse.
	LossBagSquared
)

// PerBag reports whether the loss takes one target per bag.
func (l Loss) PerBag() bool { return l == LossProportion || l == LossBagSquared }

// Target is the release column a model trains on.
type Target uint8

const (
	TargetNone          Target = iota // nothing (bot)
	TargetLabel                       // the dataset's clean label (none)
	TargetLabelRR                     // label_rr: one released label per row
	TargetAlpha                       // alpha: the bag's released proportion
	TargetAlphaDebiased               // alpha_debiased: the BagLaw's Target of alpha
	// TargetSoft: soft_target, per-row targets (a value in [0, 1], or a
	// vector of C) that the trainer builds from the release through the
	// kind's law: from label_rr through the row's channel (ExampleLaw,
	// chosen by its public prior) or from the row's alpha through the
	// BagLaw's Target (ReleaseCounts).
	TargetSoft
	// TargetValueRR: value_rr, one released conversion value per row.
	TargetValueRR
	// TargetBagMean: bag_mean, the bag's released mean value.
	TargetBagMean
)

// Look is how tables and figures show a kind.
type Look struct {
	// Name is the display name, the paper's: "RR", "LLP+Geom", "no PET".
	Name string
	// Plain describes a kind without parameters in words ("clean labels",
	// "nothing released"); "" for kinds with parameters.
	Plain string
	// Family is the Name of the kind whose panel it shares when a figure
	// is split by mechanism (RR+prior's is "rr", used when rr is there
	// too); "" for its own (Kind.Family resolves it).
	Family string
	Color  RGB
	Marker Marker
}

// RGB is an opaque colour.
type RGB struct{ R, G, B uint8 }

// Marker is the shape of a kind's points in figures.
type Marker uint8

const (
	MarkerSquare Marker = iota
	MarkerCircle
	MarkerRing
	MarkerBox
	MarkerPyramid
	MarkerCross
	MarkerTriangle
)
