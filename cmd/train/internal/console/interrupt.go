package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Interrupt is the cause of a context Interruptible cancelled: the signal
// that stopped the program.
type Interrupt struct{ Signal syscall.Signal }

func (i *Interrupt) Error() string { return "interrupted by " + i.Signal.String() }

// ExitCode is the shell's status for a process the signal stopped: 128 + its
// number (130 for SIGINT, 143 for SIGTERM).
func (i *Interrupt) ExitCode() int { return 128 + int(i.Signal) }

// Interrupted is the Interrupt that cancelled ctx (nil: none did).
func Interrupted(ctx context.Context) *Interrupt {
	var i *Interrupt
	if errors.As(context.Cause(ctx), &i) {
		return i
	}
	return nil
}

// Interruptible returns ctx cancelled by the first Ctrl-C or SIGTERM (its
// cause an *Interrupt: Interrupted), so that every stage stops at its next
// step, a training group checkpoints and nothing is left half-written; a
// second one exits at once (status 130, or 143 for SIGTERM). Both are said
// on stderr, under the program's name. stop releases the signals.
func Interruptible(ctx context.Context, name string) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s, ok := <-sig
		if !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "\n%s: %v: stopping after the current step (a checkpoint is written); %v again to stop at once\n", name, s, s)
		cancel(&Interrupt{Signal: s.(syscall.Signal)})
		if s, ok = <-sig; !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "%s: %v: stopping now\n", name, s)
		os.Exit((&Interrupt{Signal: s.(syscall.Signal)}).ExitCode())
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(sig)
		cancel(nil)
	}
}
