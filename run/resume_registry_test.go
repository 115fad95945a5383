package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"hgpsim/internal/plugintest"
	"hgpsim/internal/registry"
	"hgpsim/scenarios"
)

// resumeAxes are the plug-in axes whose every kind the registry-wide
// resume test runs: what keeps state across rounds of a run.
var resumeAxes = map[string]bool{"algorithm": true, "faults": true, "links": true}

// TestEveryPluginResumes takes every registered algorithm, fault and link
// process, from the registries, through its plugintest scenario (the
// plug-in's example, or its kind named in a small run), stops the run at
// a checkpoint — the first one inside a phase when there is one — and
// resumes it: metrics.jsonl and summary.json must be byte-identical to
// the run that was never stopped, stopped on the sequential driver and
// resumed on the actors and the other way round. A new plug-in is run
// here without editing this test; one whose small scenario takes no
// checkpoint fails it (give it an example with more evaluations).
func TestEveryPluginResumes(t *testing.T) {
	t.Chdir("..") // the module root, where the examples' files are named from
	covered := map[string]int{}
	for _, a := range registry.Axes() {
		if !resumeAxes[a.Name()] {
			continue
		}
		covered[a.Name()] += 0
		for _, kind := range a.Kinds() {
			if planted[kind] {
				continue // the test of this test's own plug-ins
			}
			t.Run(a.Name()+"/"+kind, func(t *testing.T) {
				sc, src, err := plugintest.Scenario(a, kind)
				if err != nil {
					t.Fatalf("%v\n%s", err, src)
				}
				for _, p := range resumeProblems(t, sc) {
					t.Errorf("%s\n%s", p, src)
				}
			})
			covered[a.Name()]++
		}
	}
	for name := range resumeAxes {
		if covered[name] == 0 {
			t.Errorf("no %s plug-in found: the registry is not linked into this test", name)
		}
	}
	t.Logf("plug-ins resumed: %v", covered)
}

// resumeProblems runs sc uninterrupted, then stopped and resumed on each
// pair of drivers, and returns what differs (nothing: the run resumes
// exactly).
func resumeProblems(t *testing.T, sc scenarios.Scenario) []string {
	t.Helper()
	sc.Runtime.Driver, sc.Runtime.Parallel = "sequential", 1
	ref := t.TempDir()
	if _, err := Execute(context.Background(), sc, Options{OutDir: ref}); err != nil {
		t.Fatal(err)
	}
	wantM, wantS := readOutputs(t, ref)
	wantP := readPhases(t, ref)
	var problems []string
	resumed := 0
	for _, c := range [][2]string{{"sequential", "actors"}, {"actors", "sequential"}} {
		dir := t.TempDir()
		sc.Runtime.Driver, sc.Runtime.Parallel = c[0], 2
		stopped, inside, seen := stopInside(t, sc, dir)
		if !stopped {
			if seen == 0 {
				return append(problems, "the run took no checkpoint")
			}
			continue // the actors may end a short run before they see the stop
		}
		if _, err := Resume(context.Background(), ResumeOptions{Options: Options{OutDir: dir},
			Runtime: func(rs *scenarios.RuntimeSpec) { rs.Driver = c[1] }}); err != nil {
			problems = append(problems, fmt.Sprintf("stopped on %s, resuming on %s: %v", c[0], c[1], err))
			continue
		}
		where := "between phases"
		if inside {
			where = "inside a phase"
		}
		gotM, gotS := readOutputs(t, dir)
		if !bytes.Equal(gotM, wantM) {
			problems = append(problems, fmt.Sprintf("stopped %s on %s, resumed on %s: metrics.jsonl differs from the uninterrupted run's", where, c[0], c[1]))
		}
		if !bytes.Equal(gotS, wantS) {
			problems = append(problems, fmt.Sprintf("stopped %s on %s, resumed on %s: summary.json differs from the uninterrupted run's", where, c[0], c[1]))
		}
		if !bytes.Equal(readPhases(t, dir), wantP) {
			problems = append(problems, fmt.Sprintf("stopped %s on %s, resumed on %s: %s differs from the uninterrupted run's", where, c[0], c[1], PhasesFile))
		}
		resumed++
		t.Logf("stopped %s on %s, resumed on %s: identical", where, c[0], c[1])
	}
	if resumed == 0 && len(problems) == 0 {
		problems = append(problems, "no run was stopped and resumed")
	}
	return problems
}

// stopInside runs sc into dir and stops it at its first checkpoint inside
// a phase (one whose next part continues a phase cut into parts), or at
// its first checkpoint when it has none inside a phase: it runs sc once
// to count them. It reports whether the run was stopped, whether inside
// a phase, and how many checkpoints the run wrote.
func stopInside(t *testing.T, sc scenarios.Scenario, dir string) (stopped, inside bool, seen int) {
	t.Helper()
	target := 1
	probe := t.TempDir()
	k := 0
	opt := Options{OutDir: probe, Checkpointed: func(CheckpointInfo) {
		k++
		if !inside && nextOffset(t, probe) > 0 {
			inside, target = true, k
		}
	}}
	if _, err := Execute(context.Background(), sc, opt); err != nil {
		t.Fatal(err)
	}
	stopped, seen = stopAt(t, sc, dir, target, false)
	return stopped, inside, seen
}

// nextOffset is the offset within its phase of the part dir's checkpoint
// resumes with (> 0: the checkpoint cut a phase).
func nextOffset(t *testing.T, dir string) int {
	t.Helper()
	resolved, err := os.ReadFile(filepath.Join(dir, scenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	fc, err := readCheckpoint(dir, resolved)
	if err != nil {
		t.Fatal(err)
	}
	return fc.Optim.Next.Offset
}

// readPhases returns dir's PhasesFile.
func readPhases(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, PhasesFile))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
