package run

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"hgpsim/graph"
	"hgpsim/internal/plugintest"
	"hgpsim/internal/registry"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// One algorithm of every family (the package that registers it), found
// through the registry, with random links on its network.
func familyScenarios(t *testing.T) map[string]scenarios.Scenario {
	t.Helper()
	out := map[string]scenarios.Scenario{}
	axis := registry.Of[optim.Algorithm]()
	for _, kind := range optim.Algorithms.Kinds() {
		e, err := optim.Algorithms.Lookup(kind)
		if err != nil {
			t.Fatal(err)
		}
		family := reflect.TypeOf(e.New()).Elem().PkgPath()
		if _, done := out[family]; done {
			continue
		}
		sc, src, err := plugintest.Scenario(axis, kind)
		if err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, src)
		}
		// A star's links are sure by default: make the uploads random,
		// so that the trace decides something.
		if s, ok := sc.Network.Topology.Params.(*graph.Star); ok {
			s.ToHub = 0.7
		}
		out[family] = sc
	}
	return out
}

// Recording a run of each algorithm family and replaying the recording
// gives byte-identical metrics.jsonl on both drivers; so does a
// recording of a network with every failure process (the overlays apply
// again on replay, to links the trace already has down).
func TestRecordAndReplayLinks(t *testing.T) {
	cases := familyScenarios(t)
	if len(cases) < 5 {
		t.Fatalf("found %d algorithm families, want at least 5: %v", len(cases), cases)
	}
	failures, err := scenarios.Load("testdata/golden/failures.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases["failures"] = failures
	for name, sc := range cases {
		t.Run(filepath.Base(name), func(t *testing.T) {
			dir := t.TempDir()
			rec := filepath.Join(dir, "links.csv.gz")
			sc.Runtime.Driver = "sequential"
			if _, err := Execute(context.Background(), sc, Options{OutDir: filepath.Join(dir, "rec"), RecordLinks: rec}); err != nil {
				t.Fatal(err)
			}
			want := readFile(t, filepath.Join(dir, "rec", metricsFile))
			if _, err := os.Stat(filepath.Join(dir, "rec", LinksPicture)); err != nil {
				t.Errorf("no picture: %v", err)
			}
			if s := readGz(t, rec); !strings.Contains(s, "\n0,") {
				t.Fatalf("the recording has no link up in round 0:\n%.300s", s)
			}
			set, err := ReplayLinks(rec)
			if err != nil {
				t.Fatal(err)
			}
			replay, err := scenarios.ParseWith("replay", mustMarshal(t, sc), []scenarios.Set{set})
			if err != nil {
				t.Fatal(err)
			}
			if r, err := Build(replay); err != nil {
				t.Fatal(err)
			} else if _, ok := r.Net.Process.(graph.LinkTrace); !ok {
				t.Fatalf("the replay realizes links with %T, not the trace", r.Net.Process)
			}
			for _, driver := range []string{"sequential", "actors"} {
				replay.Runtime.Driver = driver
				out := filepath.Join(dir, driver)
				if _, err := Execute(context.Background(), replay, Options{OutDir: out}); err != nil {
					t.Fatalf("%s: %v", driver, err)
				}
				if got := readFile(t, filepath.Join(out, metricsFile)); !bytes.Equal(got, want) {
					t.Errorf("%s: the replay's metrics.jsonl differs from the recorded run's", driver)
				}
			}
		})
	}
}

// A run that would outlive a trace whose end policy is fail is refused
// before its first round, saying so.
func TestReplayPastTheEndFails(t *testing.T) {
	sc := parseOK(t, tiny)
	dir := t.TempDir()
	path := filepath.Join(dir, "short.csv")
	if err := os.WriteFile(path, []byte("round,from,to,up\n"+fullyUp(sc.Clients)+"#! rounds=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := ReplayLinks(path)
	if err != nil {
		t.Fatal(err)
	}
	replay, err := scenarios.ParseWith("replay", mustMarshal(t, sc), []scenarios.Set{set})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), replay, Options{OutDir: filepath.Join(dir, "out")})
	if !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), "more than the 3 of the links trace") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", metricsFile)); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote %s (%v)", metricsFile, err)
	}
}

// fullyUp lists every link of n clients up in round 0.
func fullyUp(n int) string {
	var b strings.Builder
	for i := range n {
		for j := range n {
			if i != j {
				b.WriteString("0," + strconv.Itoa(i) + "," + strconv.Itoa(j) + ",1\n")
			}
		}
	}
	return b.String()
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readGz(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustMarshal(t *testing.T, sc scenarios.Scenario) []byte {
	t.Helper()
	b, err := scenarios.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
