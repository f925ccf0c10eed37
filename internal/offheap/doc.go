// Package offheap allocates large pointer-free arrays outside the Go heap
// (anonymous memory maps). The garbage collector neither counts them in its
// heap goal nor keeps their freed pages around: a process holding a 1.1 GB
// feature matrix on the heap may grow to about twice that before a
// collection, and keeps freed pages for reuse; off the heap the matrix
// costs its size. Below Threshold, Alloc uses make.
//
// A mapped array lives as long as its *Block: Free unmaps it at once, and
// a Block that becomes unreachable is unmapped by a cleanup. Code that
// keeps such an array must keep its Block reachable as long (package data's
// Frame and Features carry theirs): an array used after its Block is gone
// faults.
package offheap
