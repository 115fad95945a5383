package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"hgpsim/report"
	"hgpsim/run"
	"hgpsim/scenarios"
)

const reportLong = `Rebuild the outputs of the sweep or experiment in DIR from its run
folders, without running anything.

A sweep's folder: results.csv, study.csv, study.md, the --plot and
--curves plots of the sweep and, for the paper's table, results.md and
validation.png. What each run is comes from DIR/sweep.json, its results
from its folder (summary.json, metrics.jsonl, error.txt). On a finished
sweep the tables come out byte for byte as the sweep wrote them; on a
stopped one, the runs that did not complete are rows marked failed.

An experiment's folder (experiment: scenarios): every output the
experiment writes (its tables, plots and summary.json), from what its
derived runs recorded in DIR/runs/. On a finished experiment they come
out byte for byte as it wrote them; a run that did not finish is an
error naming its folder (run the experiment again with the same command
and --out to finish it). The experiment's data are read as the
experiment reads them; nothing trains.`

func newReportCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Rebuild a sweep's or an experiment's tables and plots from its run folders",
		Long:  reportLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Sprintf("report needs exactly one sweep or experiment folder DIR, got %d arguments", len(args))}
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
				return cmdReportExperiment(dir, stdout)
			}
			return scenarios.Invalid(dir, "a run's folder: its summary.json and metrics.jsonl are its report; report takes a sweep's or an experiment's folder")
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

// cmdReportExperiment rebuilds an experiment's outputs and lists them.
func cmdReportExperiment(dir string, stdout io.Writer) error {
	if _, err := run.RebuildExperiment(context.Background(), dir); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "scenario.yaml" {
			fmt.Fprintln(stdout, filepath.Join(dir, e.Name()))
		}
	}
	return nil
}
