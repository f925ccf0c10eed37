package main

import (
	"hash/fnv"
	"math/rand/v2"
)

// deriveSeed derives an independent sub-seed of the config seed for one
// purpose (e.g. "release", a PET setting, a trial): FNV-1a of the labels,
// mixed with the base seed through SplitMix64. Every random choice of a run
// flows from cfg.Seed through here into explicit math/rand/v2 PCG sources.
func deriveSeed(base uint64, labels ...string) uint64 {
	h := fnv.New64a()
	for _, l := range labels {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	z := base ^ h.Sum64()
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// PCG streams of one release seed.
const (
	streamBags  = 1
	streamNoise = 2
)

func pcg(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
