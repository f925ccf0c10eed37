// Package model trains and evaluates the models of "Auditing Privacy
// Mechanisms via Label Inference Attacks" (the paper this project
// reproduces) on labels released by a privacy-enhancing technology (PET),
// with GoMLX. One engine, TrainGroup, trains a group of R models of one
// architecture and loss in one compiled program; a single run is a group of
// one.
//
// # Models (paper, Appendix C "Model Architectures")
//
//   - higgs_mlp: 4 hidden layers of 300 ReLU units, one sigmoid output.
//   - kdd_embed: features hashed into Buckets (500,000) buckets, a 50-dim
//     embedding per bucket summed over an example's indices, dense layers of
//     100 and 50 ReLU units, one sigmoid output.
//   - mlp: the same dense stack with configurable hidden sizes (none:
//     logistic regression), for tests and small experiments.
//
// Labels with C ≥ 3 classes (ModelConfig.Classes, 3..MaxClasses): mlp and
// higgs_mlp end in C logits and a softmax instead of one logit and a
// sigmoid, the same layers otherwise; kdd_embed stays binary and refuses
// C ≥ 3 (naming model.kind). Classes 0 or 2 is the binary model, bit for
// bit as before classes existed (TestBinaryGolden).
//
// Initialization (ModelConfig.Init, config key model.init) is drawn on the
// host from each replica's seed: uniform_fan_in (PyTorch's default, the
// default here), glorot_uniform (Keras') or he_normal (GoMLX's); the
// embedding table is N(0, 0.05²).
//
// # Losses (paper, Section 2 "Learning from privatized labels" and Appendix C
// "Training Setup"), matched to what each PET releases
//
//   - bce: binary cross-entropy on clean labels (no PET).
//   - debiased_bce, for randomized response with flip probability
//     π = 1/(1+e^ε): ((1−π)ℓ(p,ỹ) − πℓ(p,1−ỹ))/(1−2π), the unbiased estimate
//     of ℓ(p,y) (Natarajan, Dhillon, Ravikumar, Tewari, "Learning with Noisy
//     Labels", NeurIPS 2013; the paper's Appendix C writes it as
//     ((e^ε+1)ℓ(ỹ) − ℓ(0) − ℓ(1))/(e^ε−1), the same expression).
//   - propmatch, for LLP, LLP+Laplace and debiased LLP+Geom: the empirical
//     proportion risk Σ_bags ℓ(mean predicted probability, released α) with
//     ℓ the BCE −[α log p̄ + (1−α) log(1−p̄)], which stays unbiased for
//     mean-zero noise on α, including α outside [0,1] (Appendix D, Theorems
//     D.1 and D.2).
//   - easyllp (beyond the paper): the EasyLLP surrogate of Busa-Fekete, Choi,
//     Dick, Gentile, Muñoz Medina, "Easy Learning from Label Proportions",
//     NeurIPS 2023 (arXiv:2302.03115): each example of a bag of k gets the
//     soft label ỹ = k·α − (k−1)·p, p the label prior, and the loss
//     ỹ ℓ(f,1) + (1−ỹ) ℓ(f,0). For i.i.d. bags E[k·α − (k−1)p | x_i, y_i] =
//     y_i, and ℓ is affine in the label, so the surrogate is an unbiased
//     estimate of the example's loss.
//
// On C ≥ 3 classes, with targets of C values per row or bag
// (data.Batch.TargetWidth = C), p = softmax(z), ℓ_c = −log p_c:
//
//   - ce: Σ_c t_c ℓ_c per row, on one-hot clean labels or rr_prior's soft
//     target vectors.
//   - forward_ce (DefaultRRCorrection), for k-ary randomized response with
//     flip probability f = (C−1)/(e^ε+C−1): −log (Tᵀp)_z, T the RR
//     transition matrix (keep 1 − f, each other class f/(C−1)); Patrini,
//     Rozza, Menon, Nock, Qu, "Making Deep Neural Networks Robust to Label
//     Noise: a Loss Correction Approach", CVPR 2017.
//   - backward_ce, the same mechanism: Σ_c (T⁻¹)_{z,c} ℓ_c, unbiased (at
//     C = 2 exactly debiased_bce). Both are consistent; forward is the
//     default as it is bounded and of lower variance (DefaultRRCorrection).
//   - propmatch_ce, for the LLP family: −Σ_c α_c log p̄_c, α the bag's
//     released proportion vector (noisy entries may leave [0, 1]), p̄ its
//     mean predicted distribution; linear in α, so unbiased under mean-zero
//     noise (Appendix D, per class; at C = 2 exactly propmatch).
//
// Loss.ForClasses maps a binary loss to its C-class counterpart (easyllp
// has none).
//
// Regression (ModelConfig.Regression: one output, the identity head; the
// targets are conversion values in units of the grid's B): mse, the
// squared loss per row on a released value (laplace, rr_bins), and
// bag_mse, the squared loss of a bag's mean output on its released mean
// (value_bags). Predict then gives the output itself; ValueScores the test
// MSE, R² and MAE.
//
// # Training a group (paper, Appendix C "Training Setup": minibatch Adam, a
// grid of learning rates, 10 trials per setting)
//
// The replicas' parameters are stacked on a leading replica axis ([R, in,
// out] weights), so each dense layer is one batched DotGeneral. Each replica
// has its own init seed, learning rate, loss parameters (e.g. its RR flip
// probability), batch source (its targets, bags and seeded order) and Adam
// state; learning rates, loss parameters and the step counter are program
// inputs, so one compiled program, cached for the process, serves every group
// of the same shape. A replica's result does not depend on its group on
// backend "go": trained alone and inside a group of 8 it predicts
// bit-identically (TestGroupInvariance). On XLA it depends on it as on a
// seed: programs of other R round differently and training amplifies it
// (on an H100, 2.6e-5 mean |Δp| after 1 step, 7e-3 after 32, for a C-class
// higgs_mlp: model/drift_test.go); its distribution does not.
//
// Data: batches carry row ids into the shared features (data.Batch.RowIDs).
// Dense features are either resident on the backend (uploaded once; each
// step sends an int32 index tensor [R, B] and the rows are gathered on the
// device) or gathered on the host and sent per step (ResidentMode; the
// default uploads on XLA backends up to 4 GiB and uses host batches on
// "go"). Losses accumulate on the device and are read back every LossEvery
// steps; a non-finite loss is an error naming the replica.
//
// kdd_embed keeps one table per replica (R × (Buckets+1) × 50, one zero
// "trash" row per replica for padding). With GroupConfig.SparseEmbedding
// the host computes each step's unique rows and lazy Adam updates only
// those, in place (ScatterSum on the donated table); otherwise dense Adam
// updates the whole table every step.
//
// Checkpoints are the package's own format (checkpoint.go): one file per
// group, snapshotted at a step boundary and written in the background,
// atomically (temporary file, fsync, rename) and verified on load (length,
// CRC-32C); a damaged one is set aside, never loaded. By default a group
// checkpoints every 10 minutes of wall-clock time.
//
// TrainGroup takes its features as data.Features, a type with no label or
// release column: a PET model's trainer cannot read raw labels, and its
// targets come only from each replica's batch source (over a release).
// Group.Predict gives every replica's probabilities in one pass: P(y=1|x)
// per row for a binary model, the C class probabilities per row (row-major)
// for a C-class one, the audit's η̂. LogLoss evaluates binary predictions on
// the host; Accuracy, MacroAUC (one-vs-rest, exact) and CrossEntropy
// C-class ones. Bench measures training throughput on any backend.
//
// # Backends
//
// NewBackend selects the GoMLX backend explicitly: "go" (pure Go, the
// default, builds and runs anywhere), "xla:cpu" or "xla:cuda" (PJRT plugins
// found through PJRT_PLUGIN_LIBRARY_PATH; never downloaded at run time).
// The XLA backend needs cgo; building with CGO_ENABLED=0 or -tags noxla
// leaves it out (backend_noxla.go) and "xla:*" then reports an error.
// NewBackend changes no process state beyond GoMLX's auto-install switch
// and gradient registry; BackendEnv lists environment variables a program
// may want to set first.
//
// On the pure-Go backend GoMLX's gradients of Dot and of the batched
// DotGeneral materialize a product-sized tensor; this package replaces them
// in GoMLX's registry with DotGeneral products, 12–15× faster (dotvjp.go).
// NewBackend and TrainGroup install them, once per process, so no caller
// has a set-up call to forget.
//
// Backend "go" also runs its float32 matrix products on package sgemm's
// packed AVX2/FMA kernel, through package simplegofast, which NewBackend
// installs into GoMLX v0.26.0's simplego (it refuses other versions, CPUs
// without AVX2/FMA and other architectures, and "go:matmul=simplego"
// switches it off; Matmul tells which path a backend runs). With that
// kernel the products stop dominating, so on that path the graph folds each
// dense layer's bias into its product (foldedDenseStack) and Adam runs on
// the host in one fused pass (adam_host.go); simplegofast also replaces
// simplego's element-wise Where, x ≥ c and Slice with branch-free,
// multi-core ones. Higgs MLP: 390 → ~20 µs of CPU per example.
package model
