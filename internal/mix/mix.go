// Package mix holds the one integer mixer the project uses: SplitMix64
// (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014). It hashes libsvm feature indices into buckets (data), derives
// independent sub-seeds from the config seed (pipeline) and seeds per-unit
// random streams (audit).
package mix

// SplitMix64 returns the SplitMix64 output for state x: x advanced by the
// golden-ratio increment 0x9E3779B97F4A7C15, then the finalizer with the
// constants 0xBF58476D1CE4E5B9 and 0x94D049BB133111EB. It is a bijection of
// uint64, so distinct inputs give distinct outputs.
func SplitMix64(x uint64) uint64 {
	z := x + 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
