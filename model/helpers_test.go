package model

import (
	"os"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
)

// testBackend is the backend of tests and benchmarks: "go" unless
// MODEL_TEST_BACKEND names another (e.g. "xla:cpu", "go:ops_sequential").
var testBackend = sync.OnceValues(func() (backends.Backend, error) {
	return NewBackend(os.Getenv("MODEL_TEST_BACKEND"))
})

func goBackend(tb testing.TB) backends.Backend {
	tb.Helper()
	b, err := testBackend()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
