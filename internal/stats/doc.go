// Package stats holds small exact statistics shared by the data, model and
// audit stages: the tie-aware ROC AUC (Mann–Whitney U) and the expected AUC
// of a scorer whose positives are drawn y ~ Bernoulli(η).
package stats
