package experiments

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// errKilled stands for a kill: the run stops where it is.
var errKilled = errors.New("killed")

// killEnv is the Env run.Execute gives an experiment, whose drivers stop
// the run right after its every-th checkpoint of this invocation, as a
// kill at that moment would (the records written after the checkpoint
// are lost with the stream's buffer).
type killEnv struct {
	scenarios.Env
	run.RunFolders
	every int
	saves atomic.Int64 // the runs of weighted-nodes run jobs at once
}

func newKillEnv(sc scenarios.Scenario, dir string, every int) *killEnv {
	e := run.NewEnv(sc, dir, nil)
	return &killEnv{Env: e, RunFolders: e.(run.RunFolders), every: every}
}

// checkpointInterval implements checkpointPacer: a checkpoint at every
// boundary.
func (k *killEnv) checkpointInterval() time.Duration { return 0 }

func (k *killEnv) NewDriver(nw *graph.Network, f optim.ClientFactory) (optim.Driver, func(), error) {
	d, release, err := k.Env.NewDriver(nw, f)
	if err != nil {
		return nil, nil, err
	}
	return &killDriver{Driver: d, k: k}, release, nil
}

type killDriver struct {
	optim.Driver
	k *killEnv
}

func (d *killDriver) Execute(ctx context.Context, prog optim.Program, sink optim.Sink) (optim.Traffic, error) {
	return d.Driver.Execute(ctx, &killProgram{Program: prog, k: d.k}, sink)
}

type killProgram struct {
	optim.Program
	k *killEnv
}

func (p *killProgram) Next(done *optim.PhaseReport) (*optim.PhaseSpec, error) {
	next, err := p.Program.Next(done)
	if done != nil && done.Spec.Name == optim.PhaseSaveState {
		if p.k.saves.Add(1)%int64(p.k.every) == 0 {
			return nil, errKilled
		}
	}
	return next, err
}

// outputs reads an experiment's output files (not its run folders), with
// what depends on the wall clock blanked.
func outputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func sameOutputs(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d output files, want %d", what, len(got), len(want))
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: %s missing", what, name)
		} else if g != w {
			t.Errorf("%s: %s differs from the uninterrupted experiment's", what, name)
		}
	}
}

// runFolders returns the derived runs' folders of an experiment.
func runFolders(t *testing.T, dir string) []string {
	t.Helper()
	ds, err := filepath.Glob(filepath.Join(dir, run.ExperimentRunsDir, "*"))
	if err != nil || len(ds) == 0 {
		t.Fatalf("no run folders in %s: %v", dir, err)
	}
	return ds
}

// Every experiment killed right after checkpoints again and again, each
// time continued with the same command, then with some runs' done marks
// removed and streams cut short, writes the same bytes as an experiment
// that never stopped; `hgpsim report` (RebuildExperiment) writes them
// again running nothing, and refuses a folder with a run that did not
// finish, naming it.
func TestExperimentsNeverLoseWork(t *testing.T) {
	// A stand-in loader that leaves TestWeightedNodesExperiment's count of
	// loads alone.
	fake := func() (train, test *datasets.Dataset, err error) {
		train, test, err = fakeFashion()
		fakeLoads--
		return
	}
	for _, c := range []struct {
		name string
		sc   func() scenarios.Scenario
	}{
		{"hgp-error", func() scenarios.Scenario {
			sc := tinyHGPError(t)
			spec(sc).M, sc.SGP.Rounds = 10, 50
			return sc
		}},
		{"comm-fedbio", func() scenarios.Scenario {
			path := filepath.Join(t.TempDir(), "tiny.yaml")
			if err := os.WriteFile(path, []byte(tinyFedBio), 0o644); err != nil {
				t.Fatal(err)
			}
			sc, err := scenarios.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			sc.Runtime.Driver = "actors" // checkpoints saved and loaded inside the clients' actors
			return sc
		}},
		{"weighted-nodes", func() scenarios.Scenario {
			sc := tinyWeightedNodes(t)
			sc.Experiment.Params.(*WeightedNodesExp).load = fake
			return sc
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			clean := t.TempDir()
			if _, err := run.Execute(ctx, c.sc(), run.Options{OutDir: clean}); err != nil {
				t.Fatal(err)
			}
			want := outputs(t, clean)

			// Killed after a checkpoint, continued each time.
			dir := t.TempDir()
			kills, resumed := 0, 0
			for {
				sc := c.sc()
				for _, f := range runFoldersIfAny(dir) {
					if _, err := os.Stat(filepath.Join(f, runCheckpointFile)); err == nil {
						resumed++
					}
				}
				_, err := sc.Experiment.Params.Run(ctx, sc, newKillEnv(sc, dir, 1))
				if err == nil {
					break
				}
				if !errors.Is(err, errKilled) {
					t.Fatal(err)
				}
				if kills++; kills > 200 {
					t.Fatal("killed 200 times")
				}
			}
			if _, err := run.Execute(ctx, c.sc(), run.Options{OutDir: dir}); err != nil {
				t.Fatal(err)
			}
			sameOutputs(t, "killed and continued", want, outputs(t, dir))
			for _, f := range runFolders(t, clean) {
				for _, name := range []string{runScenarioFile, runStreamFile, runDoneFile} {
					a, _ := os.ReadFile(filepath.Join(f, name))
					b, err := os.ReadFile(filepath.Join(dir, run.ExperimentRunsDir, filepath.Base(f), name))
					if err != nil || !bytes.Equal(a, b) {
						t.Errorf("%s/%s differs from the uninterrupted run's (%v)", filepath.Base(f), name, err)
					}
				}
			}
			if c.name != "hgp-error" && (kills == 0 || resumed == 0) {
				t.Errorf("%d kills, %d runs resumed from a checkpoint: the test tests nothing", kills, resumed)
			}
			t.Logf("%d kills, %d resumptions", kills, resumed)

			// Runs whose done mark is gone run again; a stream cut short
			// without its done mark too.
			folders := runFolders(t, dir)
			for k, f := range folders {
				switch k % 3 {
				case 0:
					if err := os.Remove(filepath.Join(f, runDoneFile)); err != nil {
						t.Fatal(err)
					}
				case 1:
					if err := os.Remove(filepath.Join(f, runDoneFile)); err != nil {
						t.Fatal(err)
					}
					st, _ := os.Stat(filepath.Join(f, runStreamFile))
					if err := os.Truncate(filepath.Join(f, runStreamFile), st.Size()/2); err != nil {
						t.Fatal(err)
					}
				}
			}
			// report: the experiment reads its data files again to describe
			// its runs, which the test's stand-in images replaced.
			var missing []string
			if c.name == "weighted-nodes" {
				missing = datasets.FashionMNIST("").Missing()
			}
			// report refuses the folder, naming a run that did not finish.
			var err error
			if len(missing) == 0 {
				_, err = run.RebuildExperiment(ctx, dir)
				if !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), filepath.Join(dir, run.ExperimentRunsDir)) || !strings.Contains(err.Error(), "did not finish") {
					t.Errorf("report on unfinished runs: %v, want an error naming a run folder", err)
				}
			}
			if _, err := run.Execute(ctx, c.sc(), run.Options{OutDir: dir}); err != nil {
				t.Fatal(err)
			}
			sameOutputs(t, "runs removed and run again", want, outputs(t, dir))

			if len(missing) == 0 {
				// report: the same bytes again, running nothing (its Env has
				// no driver).
				for name := range want {
					if name == "scenario.yaml" {
						continue
					}
					if err := os.Remove(filepath.Join(dir, name)); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := run.RebuildExperiment(ctx, dir); err != nil {
					t.Fatal(err)
				}
				sameOutputs(t, "rebuilt by report", want, outputs(t, dir))

			}
			// A changed scenario is refused, naming the run folder.
			sc := c.sc()
			sc.Runtime.CheckpointEvery = 7
			_, err = run.Execute(ctx, sc, run.Options{OutDir: dir})
			if !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), filepath.Join(dir, run.ExperimentRunsDir)) {
				t.Errorf("another scenario in the same folder: %v, want an error naming a run folder", err)
			}
			if len(missing) > 0 {
				t.Skipf("report on weighted-nodes reads the Fashion-MNIST files, missing %v: apt-get install dataset-fashion-mnist", missing)
			}
		})
	}
}

func runFoldersIfAny(dir string) []string {
	ds, _ := filepath.Glob(filepath.Join(dir, run.ExperimentRunsDir, "*"))
	return ds
}

// A stream reads back every field it records, nil and empty slices apart,
// and leaves out the parameter views; the parts of a cut phase keep their
// results.
func TestStreamRoundTrip(t *testing.T) {
	ev := &optim.RoundEvent{Phase: "sgp", Step: 3, Round: -1, Rounds: 7, Traffic: optim.Traffic{Messages: 5, Bytes: 1 << 40, Dropped: 2},
		Clients: []optim.Stats{{TrainLoss: 0.5, TrainAcc: 1, ValLoss: 2, ValAcc: 3, TestLoss: 4, TestAcc: 5, OuterLoss: 6, TrainN: 7, ValN: 8, TestN: 9,
			X: []float64{1}, Hyper: []float64{}, Weight: 0.25}, {Hyper: []float64{math.Copysign(0, -1), 1e-300, math.NaN()}}}}
	rep := &optim.PhaseReport{Spec: &optim.PhaseSpec{Name: "p", Rounds: 2, EvalEvery: 1, Step: 4, Tick: 5, Args: []byte{}, PerClient: [][]byte{nil, {1, 2}},
		Offset: 6, Total: 9, States: [][]byte{{1}}},
		Traffic: optim.Traffic{Messages: 1}, Results: []optim.Result{{Data: []byte{3}, State: nil, Stateless: "x"}},
		Delivered: &optim.DeliveryRecord{Rounds: 2, WeightSum: [][]float64{{1, 2}}, Count: [][]float64{nil}, Online: []float64{}},
		Late:      []optim.LateMessage{{Due: 1}}}
	b := appendRecord(nil, ev, nil)
	b = appendRecord(b, nil, rep)
	gotEv, _, rest, err := nextRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	_, gotRep, rest, err := nextRecord(rest)
	if err != nil || len(rest) != 0 {
		t.Fatalf("%v, %d bytes left", err, len(rest))
	}
	wantEv := *ev
	wantEv.Clients = append([]optim.Stats(nil), ev.Clients...)
	wantEv.Clients[0].X = nil
	if !sameGob(t, gotEv, &wantEv) || gotEv.Clients[0].Hyper == nil || gotEv.Clients[1].X != nil {
		t.Errorf("event %+v, want %+v", gotEv, wantEv)
	}
	wantSpec := *rep.Spec
	wantSpec.States, wantSpec.Tick = nil, 0
	wantRep := *rep
	wantRep.Spec, wantRep.Late = &wantSpec, nil
	if !sameGob(t, gotRep, &wantRep) || gotRep.Spec.Args == nil || gotRep.Spec.PerClient[0] != nil || gotRep.Results[0].State != nil ||
		gotRep.Delivered.Count[0] != nil || gotRep.Delivered.Online == nil {
		t.Errorf("report %+v, want %+v", gotRep, wantRep)
	}
	part := *rep
	partSpec := *rep.Spec
	partSpec.Continued = true
	part.Spec = &partSpec
	// An experiment may read the server's model at every evaluation: a
	// part of a cut phase keeps its results.
	if _, got, _, err := nextRecord(appendRecord(nil, nil, &part)); err != nil || !sameGob(t, got.Results, rep.Results) || !got.Spec.Continued {
		t.Errorf("a part of a cut phase reads back with results %v (%v), want %v", got.Results, err, rep.Results)
	}
	first := len(appendRecord(nil, ev, nil))
	for n := range first {
		if _, _, _, err := nextRecord(b[:n]); err == nil {
			t.Errorf("a record cut at %d of its %d bytes decodes", n, first)
		}
	}
}

// sameGob compares a and b by their gob encodings, which hold every
// field's value (but do not tell nil from empty: checked apart).
func sameGob(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := optim.EncodeState(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := optim.EncodeState(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}
