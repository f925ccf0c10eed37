// Package pipeline runs the labelprivacy experiment of "Auditing Privacy
// Mechanisms via Label Inference Attacks" from a typed config.Config, as
// stages over a session that a Go program can call one by one, each taking
// and returning typed values:
//
//	Open     config → dataset (imported, or synthesized with known η), its
//	         content identity, standardization, the grid of settings × LR ×
//	         trial (Section 4 and Appendix C "AUC vs Advantage Experimental
//	         Setup"), each run's identity and seeds            → *Session
//	Fit      simulation releases (package release) and training of every
//	         missing run, group by group                       → []report.Run
//	Audit    the exact Bayes attacker's advantage per setting (Section 3,
//	         package audit), with η from the best clean model, checked
//	         against releases of the production sampler (release.Apply)
//	         and η against held-out test rows; the model attack
//	         on every trained model, bracketed by its release
//	         (modelattack.go), and canaries through training    → *Audited
//	Report   summary tables (the paper's best-LR rule), figures, report.md,
//	         from Fit's runs and Audit's result                 → *report.Summary
//
// Run chains them (Stages: fit, audit or both, then the report); Sweep
// runs one shard of Fit for a cluster array task; SweepStatus and Emit
// (Slurm array scripts, Kubernetes Indexed Jobs) serve the cluster side;
// Privatize publishes one release meant to leave the machine; MakeDataset,
// LedgerReport and Bench serve the other commands of cmd/train. Errors
// about an option of these calls are *config.FieldError naming the
// option's key (out, shard, hash_buckets); the CLI names its flags.
//
// # Identity and seeds
//
// A run is a setting × learning rate × trial. Its seed derives from (config
// seed, setting, trial) only (deriveSeed), so a trial's models at every
// learning rate share their release, initialization and data order, and a
// run's copies on another backend or in another group start the same. Its
// run_id hashes the dataset's content identity (not its path), the config
// fingerprint (configFingerprint: model, init, standardization, epochs, batch size,
// losses, backend …), the setting, the learning rate, the trial and the
// config seed. Results live in OUT/runs/<run_id>.json, written atomically
// when a run finishes (pipeline/internal/store, validated when read): a
// rerun, another shard or a resumed sweep skips finished runs by looking.
// Each run's training recipe — loss, target column, loss parameters, bag
// and batch size, release and seeds — is its trainPlan, decided once by
// planFor. A result also records what made it (config.Invocation and
// Session.provenance: tool, revision, start, command line, TRAIN_*
// variables, the config in words; configKeys: config_id's keys) and its
// learning curve (per epoch: training loss, test AUC and log-loss;
// learning_curves.csv), with a warning when its loss diverges
// (divergeLimit).
//
// # Groups and the executor
//
// Fit trains groups of runs (formGroups): runs whose plans share the loss,
// the bag size and the batch size, up to train.replicas of them. The
// executor interface (faked by tests) trains
// one group as one unit and returns each run's test predictions; the
// default executor is model.TrainGroup, one compiled program training the
// whole group with parameters stacked on a replica axis and the features
// resident on the device. Each run keeps its own seeds,
// learning rate, targets, bags and data order, so its result does not
// depend on its group; a group checkpoints as one unit; groups — not runs —
// are what shards partition (group j belongs to shard j mod n), so every
// run lands in exactly one shard, once.
//
// # Privacy hygiene
//
// A PET model's trainer gets data.Features, a type without any label
// column, and its targets from a release file that holds no raw label; raw test labels are
// used for evaluation and the audit only. Simulation releases are seeded
// from the config seed (noise "seeded-simulation"); seeds live only in
// config.resolved.yaml, the run records and the privacy ledger, never in a
// release file.
//
// The privacy ledger composes per person (package ledger). Privatize
// records in the user's default ledger (ledger.DefaultPath) unless told
// another, and refuses an --out that would destroy data or ship the
// ledger; a session keeps its simulation releases' ledger in the output
// directory (privacy.ledger), identifying training rows by data.id_column
// or by their features as the models see them. LedgerReport verifies a
// ledger, states what it guarantees and prints its chain head;
// CheckReleases and CheckHead say whether it still holds a release file's
// row or a head kept elsewhere (a ledger restored whole from an older
// backup verifies on its own). Privatize also refuses a feature column that
// gives the labels away, and an input that is not what its meta.json
// records.
// # Mechanisms beyond the paper
//
// rr_prior (randomized response with a prior, Ghazi et al. 2021, LP-2ST):
// each (setting, trial) release trains its own prior model on stage 1's
// RR labels inside release making, through the executor (rrprior.go), and
// the audit uses that model's public priors of the audit examples. Curated
// LLP bags (bags: sorted:<feature> | key:<column>) are formed by the same
// rule for the release and for the audit (curated.go); a rule that the
// dataset cannot support is refused before any work.
//
// # Labels of C classes
//
// The dataset decides C (meta.json's classes; 2 when absent, exactly the
// binary pipeline) and the kind of its labels (data.LabelKind: a stage
// refuses at open, naming itself, what it does not serve: conversion
// values are reserved). Open makes every setting's mechanism for C classes
// (pets.Params.Classes: its kind's law on C classes, for the built-in kinds
// k-ary RR, RRWithPrior over class sets, bags of class counts; a kind that
// does not take classes is refused naming its pets entry), and planFor
// maps each loss to its C-class member
// (model.Loss.ForClasses; easyllp, which has none, is refused naming
// train.llp_loss) with class-vector targets and k-ary RR's flip
// probability; the model is a softmax head of C logits (kdd_embed refuses,
// naming model.kind). Every refusal comes before anything is written.
// rr_prior's prior model predicts C probabilities per row, and the soft
// targets of a kind trained on them are vectors (softTargets). Runs report accuracy and the macro
// one-vs-rest AUC; the audit runs audit.RunC with η from the eta_c
// columns, the clean model's C probabilities or the kNN mean of one-hot
// labels, attacking the production release code (releaseSampler).
//
// # Talking to the user
//
// The pipeline never prints: it reports through Events (Info lines, Warn
// notices, Progress), which the CLI prints and a library caller may ignore.
// Single-writer stages hold an exclusive lock on the output directory;
// sweep shards share it.
package pipeline
