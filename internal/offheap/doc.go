// Package offheap allocates large pointer-free arrays outside the Go heap
// (anonymous memory maps). The garbage collector neither counts them in its
// heap goal nor keeps their freed pages around: a process holding a 1.1 GB
// feature matrix on the heap may grow to about twice that before a
// collection, and keeps freed pages for reuse; off the heap the matrix
// costs its size. Below Threshold, Alloc uses make.
//
// # Who owns what
//
// The garbage collector does not see pointers into a mapped array: a slice
// into one keeps nothing alive. So a mapped array has exactly one owner, its
// *Block, and the Block has one owner in turn, the value that allocated it
// (package data's Frame read from a file, Dataset.Close for a dataset's
// frames; model's host embedding tables). The rules:
//
//   - Only the owner frees, with Free, once every reader of the array is
//     done (its goroutines joined). Free unmaps at once: the range may then
//     be mapped again by another allocation, so a slice used after Free can
//     read someone else's bytes without a fault. Package data's Frame.Close
//     and Dataset.Close are the owners' Free.
//   - Views (a Frame's Slice, FeaturesOnly, a copy of the struct) carry the
//     owner's Blocks, so they keep the Blocks reachable, and code that checks
//     a view asks Check whether its arrays lie in Blocks it carries: a view
//     built from raw slices without them (the cause of the `train privatize`
//     crash of issue 35: a Frame literal made of another frame's X) is a
//     programmer bug that Check reports at once, not a fault by chance.
//   - A function that reads a view's arrays through its last reference keeps
//     the view alive to its end (runtime.KeepAlive): the compiler may keep
//     only the slice in a register and let the view die mid-loop.
//   - A Block that becomes unreachable without Free is not unmapped: its pages
//     go back to the system and its range is made inaccessible and never
//     mapped again (poisoned), so a slice that outlived it faults on its next
//     access instead of reading another buffer's bytes. Only its address range
//     (not memory) stays reserved until the process exits.
//
// # Debugging
//
// LABELPRIVACY_OFFHEAP=debug (read once, at start) maps every array of
// DebugThreshold bytes or more (so that small test data is mapped too) and
// makes Free poison instead of unmap: any read after Free, or after the owner
// was collected, faults every time. The tests of the packages that hold
// mapped arrays run their large cases under it with GOGC=1.
package offheap
