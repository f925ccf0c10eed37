package model

// Batch is one minibatch handed to the trainer. It carries features and the
// *released* training target only: a PET model's batch never holds raw labels.
//
// Dense features are row-major: X[i*Dim+j] is feature j of row i.
// Sparse features (kdd_embed) are padded to a fixed Width per row:
// Indices[i*Width+t] is a hashed bucket id in [0, Buckets) and
// IndexMask[i*Width+t] is 1 for a real index and 0 for padding (whose index is 0).
type Batch struct {
	Rows int // examples in the batch

	X   []float32 // Rows×Dim, nil when the model has no dense input
	Dim int

	Indices   []int32   // Rows×Width, nil when the model has no sparse input
	IndexMask []float32 // Rows×Width
	Width     int

	// Target is, per row, the clean label (mechanism none) or the released
	// RR label (rr), as 0/1 floats; for the LLP family it is one released
	// (possibly debiased) proportion per bag, len Rows/BagSize.
	Target []float32

	// BagSize is 0 for per-example targets; k when the batch is Rows/k
	// consecutive bags of k rows each (the LLP family).
	BagSize int
}

// BatchSource yields the batches of one epoch and then io.EOF. Reset starts
// the next epoch (with a fresh, seeded shuffle where the source shuffles).
// Defined here, where it is used; data/ provides an implementation that
// cmd/train adapts.
type BatchSource interface {
	Next() (*Batch, error)
	Reset() error
}
