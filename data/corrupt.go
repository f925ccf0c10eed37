package data

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// corrupt marks err, returned by arrow-go while decoding a file, as a damaged
// file (ErrCorrupt). A failure of the operating system (e.g. EIO) passes
// through unchanged; a read outside the file (a damaged offset) does not.
func corrupt(err error) error {
	var errno syscall.Errno
	if err == nil || errors.Is(err, ErrCorrupt) || errors.As(err, &errno) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// recoverCorrupt, deferred by every function that decodes a file with
// arrow-go, turns a panic raised inside a dependency (arrow-go, flatbuffers,
// thrift: their decoders panic on some damaged input) into an error wrapping
// ErrCorrupt. A panic raised by this module's own code is a programmer bug
// and is raised again: the fuzz tests rely on that to find our bugs.
func recoverCorrupt(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if f, ok := r.(interface{ Addr() uintptr }); ok {
		// A memory fault (debug.SetPanicOnFault) reading a mapped file:
		// the file shrank or its storage failed while it was read.
		*err = fmt.Errorf("%w: a memory fault reading the mapped file at %#x (did it change while it was read?): %v", ErrCorrupt, f.Addr(), r)
		return
	}
	if _, ok := r.(allocLimitError); !ok && panickedInOwnCode() {
		panic(r)
	}
	*err = fmt.Errorf("%w: %v", ErrCorrupt, r)
}

// panickedInOwnCode reports whether the innermost non-runtime frame of the
// panicking goroutine's stack (the function that panicked) belongs to this
// module. Called from a deferred function during a panic.
func panickedInOwnCode() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	inPanic := false
	for {
		fr, more := frames.Next()
		switch {
		case fr.Function == "runtime.gopanic":
			inPanic = true
		case inPanic && !strings.HasPrefix(fr.Function, "runtime."):
			return strings.HasPrefix(fr.Function, "labelprivacy/")
		}
		if !more {
			return false
		}
	}
}

// allocLimitError is the panic of a limitedAllocator.
type allocLimitError struct{ size, limit int }

func (e allocLimitError) Error() string {
	return fmt.Sprintf("a buffer of %d bytes is declared, more than the %d this file can hold", e.size, e.limit)
}

// limitedAllocator refuses any single allocation above limit bytes. Readers
// use it so that a damaged length field (e.g. the uncompressed size of a
// compressed IPC buffer) fails as ErrCorrupt instead of exhausting memory.
type limitedAllocator struct {
	memory.Allocator
	limit int
}

func (a limitedAllocator) Allocate(size int) []byte {
	if size > a.limit {
		panic(allocLimitError{size, a.limit})
	}
	return a.Allocator.Allocate(size)
}

func (a limitedAllocator) Reallocate(size int, b []byte) []byte {
	if size > a.limit {
		panic(allocLimitError{size, a.limit})
	}
	return a.Allocator.Reallocate(size, b)
}

// maxExpansion bounds how much larger than its file one decoded buffer may
// be. Uncompressed files never exceed 1; LZ4 frames expand at most ~255×,
// and zstd only beyond that for degenerate (e.g. all-zero) columns.
const maxExpansion = 1024

// readAllocator returns the allocator for decoding a file of fileSize bytes:
// one buffer may not exceed maxExpansion × fileSize (at least 64 MiB), nor
// the machine's physical memory where it is known.
func readAllocator(fileSize int64) memory.Allocator {
	limit := int64(64 << 20)
	if fileSize > limit/maxExpansion {
		limit = min(fileSize, (1<<62)/maxExpansion) * maxExpansion
	}
	if ram := physicalMemory(); ram > 0 {
		limit = min(limit, ram)
	}
	return limitedAllocator{memory.DefaultAllocator, int(limit)}
}
