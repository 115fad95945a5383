package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hgpsim/scenarios"
)

func TestParseSeeds(t *testing.T) {
	for arg, want := range map[string][]uint64{"3": {3}, "1-3": {1, 2, 3}, "1-2,7, 9-9": {1, 2, 7, 9}} {
		got, err := ParseSeeds(arg)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v", arg, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "3-1", "1-", "-2", "0-20000"} {
		if _, err := ParseSeeds(bad); err == nil || !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), "--seeds") {
			t.Errorf("ParseSeeds(%q): %v, want an invalid-input error naming --seeds", bad, err)
		}
	}
}

// Joined keys take the same value: a grid over exact link reliabilities.
func TestGridJoinedKeys(t *testing.T) {
	g, err := ParseGrid("network.delta_min+network.delta_max=0.2,0.5")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.yaml")
	src := "name: s\nclients: 4\nnetwork:\n  kind: stochastic-directed\nsgp:\n  rounds: 5\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs, err := PlanSweep(SweepPlan{Files: []string{path}, Grid: []GridAxis{g}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[1].Scenario.Name != "s-delta_min_delta_max_0.5" {
		t.Fatalf("jobs %d, second named %q", len(jobs), jobs[len(jobs)-1].Scenario.Name)
	}
	b, err := scenarios.Marshal(jobs[1].Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "delta_min: 0.5") || !strings.Contains(string(b), "delta_max: 0.5") {
		t.Errorf("both keys should be 0.5:\n%s", b)
	}
	for _, bad := range []string{"network.delta_min+=1", "a..b=1", "x=1,,2", "x", "=1"} {
		if _, err := ParseGrid(bad); err == nil || !strings.Contains(err.Error(), "--grid") {
			t.Errorf("ParseGrid(%q): %v", bad, err)
		}
	}
}

// A sweep given the same jobs and folders keeps the runs that completed,
// resumes those with a checkpoint and runs the rest; every run's outputs
// are those of a sweep that never stopped, and a completed run keeps no
// checkpoint (one killed between summary.json and removing it). A folder
// of another scenario is refused before anything runs.
func TestSweepContinues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	src := "name: s\nclients: 4\nmethod: pdbo-da\nnetwork:\n  kind: stochastic-directed\ndata:\n  classes: 3\n  features: 4\n  train: 40\n  val: 20\n  test: 20\n" +
		"sgp:\n  rounds: 40\n  eval_every: 10\nhypergradient:\n  m: 10\nouter:\n  steps: 3\nruntime:\n  driver: sequential\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := func(dir string, sets ...string) []SweepJob {
		var ss []scenarios.Set
		for _, a := range sets {
			s, err := scenarios.ParseSet(a)
			if err != nil {
				t.Fatal(err)
			}
			ss = append(ss, s)
		}
		jobs, err := PlanSweep(SweepPlan{Files: []string{path}, Seeds: []uint64{1, 2, 3}, Sets: ss, Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	ref, dir := t.TempDir(), t.TempDir()
	if _, err := Sweep(context.Background(), plan(ref), 2, nil); err != nil {
		t.Fatal(err)
	}
	jobs := plan(dir)
	// Run 0 completed, run 1 stopped after its first checkpoint, run 2
	// never started.
	if _, err := Execute(context.Background(), jobs[0].Scenario, Options{OutDir: jobs[0].OutDir}); err != nil {
		t.Fatal(err)
	}
	if stopped, _ := stopAt(t, jobs[1].Scenario, jobs[1].OutDir, 1, true); !stopped {
		t.Fatal("run 1 ended before it could be stopped")
	}
	before, err := os.Stat(filepath.Join(jobs[0].OutDir, summaryFile))
	if err != nil {
		t.Fatal(err)
	}
	stale, err := os.ReadFile(filepath.Join(jobs[1].OutDir, checkpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jobs[0].OutDir, checkpointFile), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Sweep(context.Background(), jobs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []struct{ kept, resumed bool }{{true, false}, {false, true}, {false, false}} {
		if r := res[k]; r.Err != nil || r.Kept != want.kept || r.Resumed != want.resumed {
			t.Errorf("run %d: kept %v, resumed %v, error %v; want kept %v, resumed %v", k, r.Kept, r.Resumed, r.Err, want.kept, want.resumed)
		}
		if res[k].Summary == nil || len(res[k].Summary.Evals) == 0 || len(res[k].Summary.Outer) != 4 {
			t.Errorf("run %d: summary without its evaluations or outer steps", k)
		}
		for _, f := range []string{metricsFile, summaryFile} {
			got, err1 := os.ReadFile(filepath.Join(jobs[k].OutDir, f))
			want, err2 := os.ReadFile(filepath.Join(ref, filepath.Base(jobs[k].OutDir), f))
			if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
				t.Errorf("run %d: %s differs from the uninterrupted sweep's (%v, %v)", k, f, err1, err2)
			}
		}
	}
	if after, err := os.Stat(filepath.Join(jobs[0].OutDir, summaryFile)); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Error("the completed run was run again")
	}
	for k := range jobs {
		if _, err := os.Stat(filepath.Join(jobs[k].OutDir, checkpointFile)); !os.IsNotExist(err) {
			t.Errorf("run %d completed and kept %s (%v)", k, checkpointFile, err)
		}
	}
	// Resume of a completed run refuses, and removes a stale checkpoint.
	if err := os.WriteFile(filepath.Join(jobs[0].OutDir, checkpointFile), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(context.Background(), ResumeOptions{Options: Options{OutDir: jobs[0].OutDir}}); !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("resuming a completed run: %v, want nothing to resume", err)
	}
	if _, err := os.Stat(filepath.Join(jobs[0].OutDir, checkpointFile)); !os.IsNotExist(err) {
		t.Errorf("resume left a completed run's %s (%v)", checkpointFile, err)
	}
	err = CheckSweepFolders(plan(dir, "sgp.rounds=50"))
	if err == nil || !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), filepath.Join(jobs[0].OutDir, scenarioFile)) {
		t.Errorf("a changed scenario: %v, want an input error naming %s", err, filepath.Join(jobs[0].OutDir, scenarioFile))
	}
	if _, err := Sweep(context.Background(), plan(dir, "sgp.rounds=50"), 1, nil); err == nil {
		t.Error("Sweep ran into folders of another scenario")
	}
}
