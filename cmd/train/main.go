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

func main() {
	ctx, stop := console.Interruptible(context.Background(), "train")
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}
