package console

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// The first interrupt cancels the context (the stages stop at their next
// step); stop releases the signal (the process is not killed by it).
func TestInterruptibleCancelsOnFirstSignal(t *testing.T) {
	ctx, stop := Interruptible(context.Background(), "test")
	defer stop()
	if ctx.Err() != nil {
		t.Fatal("cancelled before any signal")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Skip("cannot signal this process:", err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the context")
	}
}
