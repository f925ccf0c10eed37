// Command train is the labelprivacy pipeline: data import and synthesis, label
// privatization, training, audit and reports, driven by one config file.
// `train` alone runs the embedded quickstart end to end.
package main

import (
	"context"
	"fmt"
	"os"

	"labelprivacy/cmd/train/internal/console"
)

func main() { os.Exit(mainStatus(os.Args[1:])) }

// mainStatus runs the command line args as the program does, Ctrl-C and
// SIGTERM stopping it at the next step, and returns its exit status
// (exitCode); an error is said on stderr.
func mainStatus(args []string) int {
	ctx, stop := console.Interruptible(context.Background(), "train")
	err := run(ctx, args, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
	}
	return exitCode(ctx, err)
}
