package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"hgpsim/optim"
	"hgpsim/scenarios"
)

// driverField matches summary.json's driver, the one field a run resumed
// on another driver may change.
var driverField = regexp.MustCompile(`"driver": *"[a-z]+"`)

func readOutputs(t *testing.T, dir string) (metrics, summary []byte) {
	t.Helper()
	m, err := os.ReadFile(filepath.Join(dir, metricsFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.ReadFile(filepath.Join(dir, summaryFile))
	if err != nil {
		t.Fatal(err)
	}
	return m, driverField.ReplaceAll(s, nil)
}

// stopAt runs sc into dir and stops it (as a signal does) once its k-th
// checkpoint is written, at the first evaluated round after it when late
// is set (so metrics.jsonl holds lines the resumed run must drop). It
// reports whether the run was stopped (false: it ended first) and the
// number of checkpoints it wrote.
func stopAt(t *testing.T, sc scenarios.Scenario, dir string, k int, late bool) (bool, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := 0
	armed := false
	opt := Options{OutDir: dir, Checkpointed: func(CheckpointInfo) {
		seen++
		if seen == k {
			if late {
				armed = true
			} else {
				cancel()
			}
		}
	}, Progress: func(optim.RoundEvent, Aggregate, int) {
		if armed {
			cancel()
		}
	}}
	_, err := Execute(ctx, sc, opt)
	if err == nil {
		// The actor runtime may finish a short run before it sees the
		// cancellation.
		return false, seen
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopping %s: %v", sc.Name, err)
	}
	return true, seen
}

// notCheckpointed lists the algorithms whose runs take no checkpoint
// (none today: the single-phase federated methods are cut into parts at
// their evaluations).
var notCheckpointed = map[string]bool{}

// TestResumeIsBitIdentical stops every golden scenario after a checkpoint
// and resumes it, on every driver, and compares metrics.jsonl and
// summary.json byte for byte with the run that was never stopped. A
// scenario whose algorithm cannot be checkpointed must leave no
// checkpoint, and resuming it must say so.
func TestResumeIsBitIdentical(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scenarios: %v", err)
	}
	// testdata/resume holds scenarios of algorithms without a golden one.
	more, err := filepath.Glob("testdata/resume/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	resumed := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			sc.Runtime.Driver, sc.Runtime.Parallel = "sequential", 1
			ref := t.TempDir()
			if _, err := Execute(context.Background(), sc, Options{OutDir: ref}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(ref, checkpointFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a completed run left %s behind (%v)", checkpointFile, err)
			}
			wantM, wantS := readOutputs(t, ref)
			for _, c := range []struct {
				from, to string
				k        int
				late     bool
			}{
				{"sequential", "actors", 1, false},
				{"actors", "sequential", 1, true},
				{"sequential", "sequential", 2, true},
			} {
				dir := t.TempDir()
				sc.Runtime.Driver, sc.Runtime.Parallel = c.from, 3
				if stopped, seen := stopAt(t, sc, dir, c.k, c.late); !stopped {
					// Fewer than k checkpoints: the run ended first.
					// One SGP phase evaluated only at its end has no cut.
					single := sc.Algorithm.Name == "pdbo" && sc.Outer.Steps == 0 && (sc.SGP.EvalEvery == 0 || sc.SGP.EvalEvery >= sc.SGP.Rounds)
					if seen == 0 && !single && !notCheckpointed[sc.Algorithm.Name] {
						t.Errorf("%s took no checkpoint (stopping at %d on %s, late %v)", sc.Algorithm.Name, c.k, c.from, c.late)
					}
					continue
				}
				_, statErr := os.Stat(filepath.Join(dir, checkpointFile))
				_, err := Resume(context.Background(), ResumeOptions{Options: Options{OutDir: dir},
					Runtime: func(rs *scenarios.RuntimeSpec) { rs.Driver = c.to }})
				if errors.Is(statErr, os.ErrNotExist) {
					// Stopped without a checkpoint: the algorithm takes none.
					if err == nil || !scenarios.IsInvalid(err) {
						t.Errorf("resuming a run without a checkpoint: got %v, want an input error", err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("checkpoint %d on %s, resumed on %s: %v", c.k, c.from, c.to, err)
				}
				gotM, gotS := readOutputs(t, dir)
				if !bytes.Equal(gotM, wantM) {
					t.Errorf("checkpoint %d on %s, resumed on %s: metrics.jsonl differs from the uninterrupted run (%d vs %d bytes)", c.k, c.from, c.to, len(gotM), len(wantM))
				}
				if !bytes.Equal(gotS, wantS) {
					t.Errorf("checkpoint %d on %s, resumed on %s: summary.json differs:\n%s\nwant\n%s", c.k, c.from, c.to, gotS, wantS)
				}
				resumed++
				t.Logf("checkpoint %d on %s, resumed on %s: identical", c.k, c.from, c.to)
			}
		})
	}
	if resumed == 0 {
		t.Fatal("no golden scenario was resumed")
	}
}

// TestResumeRefuses checks that what cannot be resumed exactly is refused
// as an input error, naming the reason, and leaves the folder as it was.
func TestResumeRefuses(t *testing.T) {
	sc, err := scenarios.Load("testdata/golden/pdbo-mtl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc.Runtime.Driver = "sequential"
	stopped := func(t *testing.T) string {
		dir := t.TempDir()
		if ok, _ := stopAt(t, sc, dir, 1, false); !ok {
			t.Fatal("the run was not stopped")
		}
		return dir
	}
	resume := func(dir string) error {
		_, err := Resume(context.Background(), ResumeOptions{Options: Options{OutDir: dir}})
		return err
	}
	edit := func(t *testing.T, path string, f func([]byte) []byte) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, want string
		prepare    func(t *testing.T, dir string)
	}{
		{"empty folder", "no scenario.yaml", func(t *testing.T, dir string) {
			for _, f := range []string{scenarioFile, metricsFile, checkpointFile} {
				os.Remove(filepath.Join(dir, f))
			}
		}},
		{"no checkpoint", "no checkpoint.bin", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, checkpointFile)) }},
		{"scenario edited", "changed since the checkpoint", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, scenarioFile), func(b []byte) []byte { return append(b, "# edited\n"...) })
		}},
		{"metrics truncated", "are not those the checkpoint recorded", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, metricsFile), func(b []byte) []byte { return b[:len(b)/2] })
		}},
		{"metrics edited", "are not those the checkpoint recorded", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, metricsFile), func(b []byte) []byte { b[10] ^= 1; return b })
		}},
		{"metrics missing", "metrics.jsonl is missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, metricsFile)) }},
		{"checkpoint corrupt", "corrupt checkpoint", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, checkpointFile), func(b []byte) []byte { return b[:len(b)-7] })
		}},
		{"not a checkpoint", "not a checkpoint", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, checkpointFile), func(b []byte) []byte { return []byte("hello") })
		}},
		{"in use", "another hgpsim process", func(t *testing.T, dir string) {
			unlock, err := lockDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(unlock)
		}},
		{"checkpoint bit flipped", "checksum does not match", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, checkpointFile), func(b []byte) []byte { b[len(b)/2] ^= 4; return b })
		}},
		{"completed", "nothing to resume", func(t *testing.T, dir string) {
			if err := resume(dir); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := stopped(t)
			c.prepare(t, dir)
			err := resume(dir)
			if err == nil || !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an input error saying %q", err, c.want)
			}
		})
	}
}

// TestResumePDBOVariants resumes PDBO runs whose state goes beyond λ and
// Adam: warm starts (the SGP iterate), SGD, early stopping (the best step
// so far), the exact Alg. 2 estimates (the dense oracle: exact-fixu in TestResumeIsBitIdentical), every
// estimator, on five outer steps, stopping at each checkpoint.
func TestResumePDBOVariants(t *testing.T) {
	base, err := os.ReadFile("testdata/golden/pdbo-mtl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		name string
		set  []string
	}{
		{"warm", []string{"outer.restart=false"}},
		{"restart", []string{"outer.restart=true"}},
		{"sgd-patience", []string{"outer.optimizer=sgd", "outer.patience=2", "outer.lr=2"}},
		{"true-estimates", []string{"hypergradient.estimates=true"}},
		{"hgp-alternate", []string{"hypergradient.estimator=hgp", "hypergradient.sampling=alternate"}},
		{"local", []string{"hypergradient.estimator=local"}},
		{"exact-undirected", []string{"hypergradient.estimator=exact", "network.kind=stochastic-undirected"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			var sets []scenarios.Set
			for _, a := range append([]string{"outer.steps=5"}, v.set...) {
				s, err := scenarios.ParseSet(a)
				if err != nil {
					t.Fatal(err)
				}
				sets = append(sets, s)
			}
			sc, err := scenarios.ParseWith("variant", base, sets)
			if err != nil {
				t.Fatal(err)
			}
			sc.Runtime.Driver, sc.Runtime.Parallel = "sequential", 1
			ref := t.TempDir()
			if _, err := Execute(context.Background(), sc, Options{OutDir: ref}); err != nil {
				t.Fatal(err)
			}
			wantM, wantS := readOutputs(t, ref)
			for k := 1; ; k++ {
				dir := t.TempDir()
				if stopped, seen := stopAt(t, sc, dir, k, k%2 == 0); !stopped {
					if k == 1 || seen < k-1 {
						t.Fatalf("stopping at checkpoint %d: the run took %d", k, seen)
					}
					break
				}
				if _, err := Resume(context.Background(), ResumeOptions{Options: Options{OutDir: dir}}); err != nil {
					t.Fatalf("checkpoint %d: %v", k, err)
				}
				gotM, gotS := readOutputs(t, dir)
				if !bytes.Equal(gotM, wantM) || !bytes.Equal(gotS, wantS) {
					t.Errorf("resumed from checkpoint %d: outputs differ from the uninterrupted run", k)
				}
			}
		})
	}
}

// decodeCheckpoint refuses every truncation and garbage without
// panicking (the checksum catches corruption first; this is the second
// line).
func TestDecodeCheckpointRefusesGarbage(t *testing.T) {
	sc, err := scenarios.Load("testdata/golden/pdbo-mtl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc.Runtime.Driver = "sequential"
	dir := t.TempDir()
	if ok, _ := stopAt(t, sc, dir, 1, false); !ok {
		t.Fatal("the run was not stopped")
	}
	b, err := os.ReadFile(filepath.Join(dir, checkpointFile))
	if err != nil {
		t.Fatal(err)
	}
	body := b[len(checkpointMagic)+32:]
	var fc fileCheckpoint
	if err := decodeCheckpoint(body, &fc); err != nil || len(fc.Optim.Clients) != sc.Nodes() {
		t.Fatalf("the checkpoint itself: %v, %d client states", err, len(fc.Optim.Clients))
	}
	for cut := 0; cut < len(body); cut += 1 + len(body)/500 {
		if err := decodeCheckpoint(body[:cut], &fileCheckpoint{}); err == nil {
			t.Errorf("cut at %d of %d bytes: no error", cut, len(body))
		}
	}
	for _, junk := range [][]byte{nil, {0xff}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, append(body[:len(body):len(body)], 0)} {
		if err := decodeCheckpoint(junk, &fileCheckpoint{}); err == nil {
			t.Errorf("%d junk bytes: no error", len(junk))
		}
	}
}
