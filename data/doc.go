// Package data is the dataset layer of labelprivacy and the only package that
// knows Apache Arrow (arrow-go v18), as pqarrow isolates Parquet in arrow-go.
//
// A dataset on disk is a directory holding train.arrow and test.arrow (Arrow
// IPC *file* format, readable by pyarrow's pa.ipc.open_file) and meta.json.
// Columns (see schema.go; columns.go is the one place that maps them to Frame
// fields):
//
//	label          uint8 0/1            raw label (never in a privatized file); a class 0..C−1
//	<feature>      float32              dense features, e.g. Higgs' 28 UCI names
//	indices        list<uint32>         sparse features, already hashed (KDD Cup 2012)
//	eta            float64              true P(y=1|x), synthetic data only
//	bag_id         int64                LLP bag of the row (privatized files)
//	label_rr       uint8                randomized-response label (privatized); a class 0..C−1
//	alpha          float64              released bag proportion (privatized)
//	alpha_debiased float64              debiased proportion, llp_geom (privatized)
//	row            int64                dataset row of a simulation release's row
//	prior          float64              rr_prior: public prior P(y=1|x) the row was released with
//	branch         uint8                rr_prior: 1 = the prior's argmax label, 0 = randomized response
//	stage          uint8                rr_prior: the stage (1 or 2) that released the row
//	ara_state      uint64               ara_event: the output state the browser sent, in [0, k);
//	                                    label_rr is then its class, or C for a state of no class
//	<key>          any integer type     other integer columns: keys (e.g. a campaign id), read
//	                                    as int64 into Frame.Keys, the groups of bags: key:<column>
//
// soft_target (float64) is a per-row training target built in memory from a
// release (rr_prior's debiased labels); no release file carries it.
//
// Labels of C classes (3 ≤ C ≤ 64, classes.go): label and label_rr hold the
// class, the schema metadata and meta.json record `classes` (absent: 2),
// and the binary-only columns eta, alpha, alpha_debiased, prior, branch and
// soft_target give way to one float64 column per class, held row-major in
// the Frame:
//
//	eta_0 … eta_{C−1}                        true η_c(x) = P(y=c|x), synthetic (raw)
//	alpha_1 … alpha_{C−1}                    released bag proportions of classes 1..C−1 (class 0: 1 − Σ)
//	alpha_debiased_1 … alpha_debiased_{C−1}  their debiased values, llp_geom
//	prior_0 … prior_{C−1}                    rr_prior: the public prior the row was released with
//	prior_set      uint64               rr_prior: the chosen set of classes, bit c ⇔ class c
//	prior_set_size uint8                rr_prior: its size k
//	soft_target_0 … soft_target_{C−1}        in memory only: a per-row soft target vector
//
// Conversion values (values.go; meta.json labels "values", value_max B and
// value_step s): label is float64 on the grid 0, s, …, B (clipped and
// rounded when the dataset is made, counted by an import), synthetic data
// adds its law p0, mu and sigma (raw), and releases carry value_rr (one
// released value a row) or bag_id and bag_mean (a bag's released mean).
// Imports: libsvm with a real label first, csv with a named label column
// (ImportCSV); synth kind values (synth_values.go). Batch targets value_rr
// and bag_mean, scaled by BatchOptions.ValueScale.
//
// Binary files, meta.json and batches are byte for byte those of before
// (testdata/binary_identity.golden.json). The batch source's class targets
// are vectors of C float32 a row or bag (Batch.TargetWidth): one-hot for
// labels, the proportion vector for bags, the soft vector for rr_prior.
//
// Importers stream (Higgs CSV, libsvm; the paper's Section 4 and Appendix C
// datasets, KDD Cup 2012 hashed to 500,000 buckets; libsvm also with C
// classes) with bounded memory; synthesizers draw data with a known η(x)
// (the paper's Section 4 synthetic Beta(2,30) and uniform η, a logistic
// model whose Bayes-optimal AUC is known, and a C-class softmax model whose
// Bayes accuracy is known). Every output is written to a temporary file in its destination
// directory, named after its owner (host and pid), and renamed when
// complete; a writer first removes the temporaries a killed writer of the
// same target left (atomic.go). A dataset directory is written whole in a
// temporary directory and put in place in one step (publishdir.go), so a
// killed import never leaves files of two datasets side by side. meta.json
// records the SHA-256 of the files, and opening a dataset checks the files'
// bytes against it (identity.go), so a dataset is named by its verified
// content (Meta.Identity, DatasetIdentity), never by its path.
//
// Reading never crashes on a damaged file: the IPC footer is verified before
// arrow-go decodes it, allocations are capped, dependency panics become
// ErrCorrupt, and list offsets and column lengths are checked (corrupt.go,
// ipcfooter.go). Load checks test against train and meta.json (ErrMismatch).
//
// The batch source (batch.go) shuffles with an explicit math/rand/v2 seed and
// can keep LLP bags whole inside a batch ("B bags of k"), as PropMatch
// (paper Section 2, Appendix C) needs. Standardizer z-scores dense features
// from training features only (the paper does not say whether it
// standardized).
package data
