// Package data is the dataset layer of labelprivacy and the only package that
// knows Apache Arrow (arrow-go v18), as pqarrow isolates Parquet in arrow-go.
//
// A dataset on disk is a directory holding train.arrow and test.arrow (Arrow
// IPC *file* format, readable by pyarrow's pa.ipc.open_file) and meta.json.
// Columns (see schema.go):
//
//	label          uint8 0/1            raw label (never in a privatized file)
//	<feature>      float32              dense features, e.g. Higgs' 28 UCI names
//	indices        list<uint32>         sparse features, already hashed (KDD Cup 2012)
//	eta            float64              true P(y=1|x), synthetic data only
//	bag_id         int64                LLP bag of the row (privatized files)
//	label_rr       uint8                randomized-response label (privatized)
//	alpha          float64              released bag proportion (privatized)
//	alpha_debiased float64              debiased proportion, llp_geom (privatized)
//
// Importers stream (Higgs CSV, libsvm), synthesizers draw data with a known
// η(x) (the paper's Section 4 synthetic Beta(2,30) and uniform η, plus a
// logistic model whose Bayes-optimal AUC is known), and every output is
// written to a temporary file in its destination directory and renamed when
// complete, so a failed or killed run never leaves a truncated file behind.
//
// The batch source (batch.go) shuffles with an explicit math/rand/v2 seed and
// can keep LLP bags whole inside a batch ("B bags of k"), as PropMatch
// (paper Section 2, Appendix C) needs.
package data
