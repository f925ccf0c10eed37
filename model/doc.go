// Package model trains and evaluates the models of "Auditing Privacy
// Mechanisms via Label Inference Attacks" (the paper this project
// reproduces) on labels released by a privacy-enhancing technology (PET),
// with GoMLX.
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
// Models output logits; probabilities are their sigmoid. Graph builders
// (Logits, Dense, EmbedSum, LossGraph) take a *context.Context whose scope
// holds the variables, so several replicas can be built in one graph under
// different scopes.
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
// # Training
//
// Train runs Adam (Kingma and Ba, ICLR 2015) over a BatchSource for a number
// of epochs, with seeded initialization (same seed, same backend, same
// batches: same model), GoMLX checkpoints to resume a killed run, a progress
// hook, and errors (never panics) for bad batches, non-finite losses and
// GoMLX graph failures. Trained.Predict gives probabilities; AUC (exact,
// tie-aware) and LogLoss evaluate them.
//
// # Backends
//
// NewBackend selects the GoMLX backend explicitly: "go" (pure Go, the
// default, builds and runs anywhere), "xla:cpu" or "xla:cuda" (PJRT plugins
// found through PJRT_PLUGIN_LIBRARY_PATH; never downloaded at run time).
// The XLA backend needs cgo; building with CGO_ENABLED=0 or -tags noxla
// leaves it out (backend_noxla.go) and "xla:*" then reports an error.
//
// On the pure-Go backend GoMLX's matrix×matrix Dot gradient materializes an
// [i,j,k] tensor; this package replaces it at init with two DotGeneral calls
// (dotvjp.go), about 16–20× faster for the Higgs MLP.
package model
