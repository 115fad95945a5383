package run

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"hgpsim/scenarios"
)

// A training run an experiment runs (Env.Run, as fbo-table does) keeps its
// folder below runs/: asked again, a finished run is read back, not run,
// with the same report; in replay-only mode (RebuildExperiment) a run
// without its report is an error naming its folder; the same name asked
// twice gets two folders.
func TestExperimentEnvRunKeepsFinishedRuns(t *testing.T) {
	sc, err := scenarios.Load("testdata/golden/fedavg-star.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first := NewEnv(sc, dir, nil)
	rep, err := first.Run(context.Background(), sc, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Evals) == 0 || rep.Traffic.Bytes == 0 {
		t.Fatalf("report %+v: nothing measured", rep)
	}
	folder := filepath.Join(dir, ExperimentRunsDir, "a")
	metrics := filepath.Join(folder, metricsFile)
	before, err := os.Stat(metrics)
	if err != nil {
		t.Fatal(err)
	}
	replay := &env{sc: sc, dir: dir, replay: true}
	again, err := replay.Run(context.Background(), sc, "a")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, rep) {
		t.Errorf("read back:\n%+v\nwant\n%+v", again, rep)
	}
	if after, err := os.Stat(metrics); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the finished run ran again (%v)", err)
	}
	if got := replay.RunFolder("a"); got != filepath.Join(dir, ExperimentRunsDir, "a.2") {
		t.Errorf("a name asked again gets %s", got)
	}
	if err := os.Remove(filepath.Join(folder, runReportFile)); err != nil {
		t.Fatal(err)
	}
	_, err = (&env{sc: sc, dir: dir, replay: true}).Run(context.Background(), sc, "a")
	if !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), folder) {
		t.Errorf("replaying a run without its report: %v, want an error naming %s", err, folder)
	}
	rerun, err := NewEnv(sc, dir, nil).Run(context.Background(), sc, "a")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rerun, rep) {
		t.Error("the run run again reports otherwise")
	}
}
