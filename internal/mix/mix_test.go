package mix

import "testing"

// The reference outputs of SplitMix64 seeded with 0 (the first three values
// of the generator in Steele et al.'s paper and Vigna's splitmix64.c).
func TestSplitMix64Reference(t *testing.T) {
	state := uint64(0)
	for i, want := range []uint64{0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F} {
		if got := SplitMix64(state); got != want {
			t.Fatalf("output %d = %#x, want %#x", i, got, want)
		}
		state += 0x9E3779B97F4A7C15
	}
}
