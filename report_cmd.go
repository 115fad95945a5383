package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"hgpsim/report"
	"hgpsim/scenarios"
)

const reportLong = `Rebuild the tables and plots of the sweep in DIR from its run folders,
without running anything: results.csv, study.csv, study.md, the --plot
and --curves plots of the sweep and, for the paper's table, results.md and
validation.png. What each run is comes from DIR/sweep.json, its results
from its folder (summary.json, metrics.jsonl, error.txt). On a finished
sweep the tables come out byte for byte as the sweep wrote them; on a
stopped one, the runs that did not complete are rows marked failed.

The outputs of an experiment (experiment: scenarios) are written by the
experiment itself and cannot be rebuilt yet; DIR must be a sweep's folder.`

func newReportCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Rebuild a sweep's tables and plots from its run folders",
		Long:  reportLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Sprintf("report needs exactly one sweep folder DIR, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdReport(args[0], stdout)
		},
	}
}

func cmdReport(dir string, stdout io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageError{fmt.Sprintf("%s is not a folder", dir)}
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep.json")); errors.Is(err, os.ErrNotExist) {
		if sc, err := scenarios.Load(filepath.Join(dir, "scenario.yaml")); err == nil {
			if sc.Experiment != nil {
				return scenarios.Invalid(dir, "an experiment's folder: its outputs are written by the experiment and cannot be rebuilt from run folders yet; run it again")
			}
			return scenarios.Invalid(dir, "a run's folder: its summary.json and metrics.jsonl are its report; report takes a sweep's folder")
		}
	}
	table, _, err := report.Rebuild(dir)
	if err != nil {
		return err
	}
	text, err := os.ReadFile(filepath.Join(dir, table))
	if err != nil {
		return err
	}
	_, err = stdout.Write(text)
	return err
}
