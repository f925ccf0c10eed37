package main

import (
	"io"

	"github.com/spf13/cobra"
)

// newBenchCmd is filled in with the replica trainer's benchmark (issue 11).
func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{Use: "bench", Short: "Benchmark the trainer (aggregate examples/s and compile time)", Hidden: true}
}
