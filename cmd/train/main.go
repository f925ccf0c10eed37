// Command train is the labelprivacy pipeline: data import and synthesis, label
// privatization, training, audit and reports, driven by one config file.
// `train` alone runs the embedded quickstart end to end.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	go interrupts(cancel)
	err := run(ctx, os.Args[1:], os.Stdout)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

// interrupts turns the first Ctrl-C or SIGTERM into a cancelled context:
// every stage stops at its next step, a training group checkpoints, and
// nothing is left half-written. A second one exits at once.
func interrupts(cancel context.CancelFunc) {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	s := <-sig
	fmt.Fprintf(os.Stderr, "\ntrain: %v: stopping after the current step (a checkpoint is written); %v again to stop at once\n", s, s)
	cancel()
	s = <-sig
	fmt.Fprintf(os.Stderr, "train: %v: stopping now\n", s)
	code := 130
	if s == syscall.SIGTERM {
		code = 143
	}
	os.Exit(code)
}
