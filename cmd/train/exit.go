package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"labelprivacy/cmd/train/internal/console"
	"labelprivacy/config"
)

// The exit codes of train (README's Commands section and `train --help`
// say them).
const (
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // unknown command or flag, bad argument, bad config key, type or range
	// 130 (SIGINT, Ctrl-C) and 143 (SIGTERM): stopped by the signal, after
	// the checkpoint a training group writes (console.Interrupt.ExitCode).
)

// exitHelp is the paragraph of `train --help` that says the exit codes.
const exitHelp = `Exit status: 0 done; 1 failed; 2 a usage error (an unknown command or flag, a bad
argument, a config key, type or value refused); 130 stopped by Ctrl-C (SIGINT) and
143 by SIGTERM, after the checkpoint a training group writes.`

// ranError is an error a command's RunE returned: the command line was
// parsed and the command ran. Any other error of cobra's is a usage error.
type ranError struct{ err error }

func (e *ranError) Error() string { return e.err.Error() }
func (e *ranError) Unwrap() error { return e.err }

// markRan wraps the RunE of c and of every command under it so that its
// errors are ranErrors (exitCode tells them from cobra's usage errors).
func markRan(c *cobra.Command) {
	if f := c.RunE; f != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if err := f(cmd, args); err != nil {
				return &ranError{err}
			}
			return nil
		}
	}
	for _, s := range c.Commands() {
		markRan(s)
	}
}

// exitCode is the process status for err, the result of the command line
// run under ctx (an Interruptible context): 0 for nil; 2 for an error of
// cobra's (the command line did not parse) or one about the config or a
// flag's value (config.ErrConfig, usageError); 130 or 143 when a signal
// stopped the command; else 1.
func exitCode(ctx context.Context, err error) int {
	var ran *ranError
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case !errors.As(err, &ran), errors.Is(err, config.ErrConfig), errors.As(err, &usage):
		return exitUsage
	}
	if i := console.Interrupted(ctx); i != nil {
		return i.ExitCode()
	}
	return exitFailure
}

// usageError is an error about how a command was called (status 2), in
// the command's words (flags for keys); Unwrap gives its cause.
type usageError struct {
	msg string
	err error
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return e.err }
