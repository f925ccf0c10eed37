// Package llp partitions a dataset into the random bags of learning from
// label proportions ("Auditing Privacy Mechanisms via Label Inference
// Attacks", Section 2: the dataset is "partitioned uniformly at random into
// bags of a given size k" and only each bag's label proportion is released;
// Appendix C and D train on such bags with Proportion Matching).
//
// Partition draws a seeded uniform permutation of the rows (Fisher–Yates
// with Lemire's unbiased bounded integers, implemented here so that bag ids
// depend only on the seed's word stream, not on math/rand/v2's helpers) and
// cuts it into consecutive blocks of k: bag b is the b-th block. The
// remainder of n mod k rows is either dropped and counted (the default: all
// bags have exactly k rows, as the paper assumes) or kept as one smaller
// last bag; per-bag consumers must then use each bag's actual size (see
// package pets, whose release functions take the size n).
//
// Beyond the paper, curated bags (rule.go): Sorted sorts rows by one
// feature and cuts them into bags of k (bags of similar rows), Keyed forms
// bags of k within the groups of an integer key (an aggregate report per
// campaign; each group's leftovers dropped or kept as one smaller bag).
// Both draw a seeded random order first, which breaks ties, and implement
// Partitioner, as Random does for Partition; Rule is the parsed config form
// (random | sorted:<feature> | key:<column>).
package llp
