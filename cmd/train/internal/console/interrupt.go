package console

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Interruptible returns ctx cancelled by the first Ctrl-C or SIGTERM, so
// that every stage stops at its next step, a training group checkpoints
// and nothing is left half-written; a second one exits at once (status 130,
// or 143 for SIGTERM). Both are said on stderr, under the program's name.
// stop releases the signals.
func Interruptible(ctx context.Context, name string) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s, ok := <-sig
		if !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "\n%s: %v: stopping after the current step (a checkpoint is written); %v again to stop at once\n", name, s, s)
		cancel()
		if s, ok = <-sig; !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "%s: %v: stopping now\n", name, s)
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(sig)
		cancel()
	}
}
