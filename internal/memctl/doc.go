// Package memctl bounds the garbage the Go runtime lets pile up beside a
// process's live data. With the default GOGC=100 the heap may reach twice
// what is live before a collection, so a fit holding 300 MB of person keys
// and release columns could hold 300 MB more of garbage. Start keeps the
// collector's target percentage matched to the live heap after every
// collection, so that about max(MinHeadroom, a tenth of it) of garbage
// accumulates. The large arrays (features, embedding tables) live outside
// the heap (package offheap) or hold no pointers, so the extra collections
// cost little; a training step makes little garbage.
//
// Headroom reports the memory this process can still use, the smallest of
// three limits — Linux's MemAvailable, what the cgroup's memory limit
// leaves, and what the address-space limit (RLIMIT_AS, `ulimit -v`) leaves
// beyond the process's mapped size (VmSize) — and which one it is:
// pipeline refuses a model or dataset estimated above it before allocating
// anything, naming that limit (under `ulimit -v` a model that passed a
// MemAvailable-only guard died in Go's allocator with a 214-line dump).
package memctl
