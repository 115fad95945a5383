package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

// newBenchCmd is a placeholder while the benchmarks move into package bench.
func newBenchCmd(_, _ io.Writer) *cobra.Command {
	return &cobra.Command{Use: "bench", Short: "Rounds per second of both drivers (being moved to package bench)",
		RunE: func(*cobra.Command, []string) error { return errors.New("bench: being moved to package bench") }}
}
