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
	if i := Interrupted(ctx); i == nil || i.Signal != syscall.SIGTERM || i.ExitCode() != 143 {
		t.Fatalf("Interrupted = %v, want SIGTERM with exit code 143", i)
	}
}

// A context that stop cancelled, or its parent, was not interrupted.
func TestInterruptedOnlyBySignal(t *testing.T) {
	ctx, stop := Interruptible(context.Background(), "test")
	stop()
	if ctx.Err() == nil || Interrupted(ctx) != nil {
		t.Fatalf("after stop: err %v, Interrupted %v", ctx.Err(), Interrupted(ctx))
	}
	if got := (&Interrupt{Signal: syscall.SIGINT}).ExitCode(); got != 130 {
		t.Fatalf("SIGINT exit code %d, want 130", got)
	}
}
