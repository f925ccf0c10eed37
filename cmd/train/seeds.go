package main

import (
	"hash/fnv"
	"math/rand/v2"

	"labelprivacy/internal/mix"
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
	return mix.SplitMix64(base ^ h.Sum64())
}

// PCG streams of one release seed.
const (
	streamBags  = 1
	streamNoise = 2
)

func pcg(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }
