package graph

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"hgpsim/internal/registry"
)

// failingNetwork is a directed network with bursty links and every
// failure process, so that a recording holds cuts, offline clients and
// delays.
func failingNetwork(t testing.TB, n int, links registry.Choice[LinkProcess]) *Network {
	t.Helper()
	topo := registry.Choose[Topology]("stochastic-directed")
	topo.Params.(*Stochastic).Process = links
	nw, err := Build(topo, n, 5)
	if err != nil {
		t.Fatal(err)
	}
	fs := []registry.Choice[Failure]{
		{Name: "churn", Params: &Churn{Nodes: []int{1}, Share: 0.3, MeanOffline: 4}},
		{Name: "crash", Params: &Crash{Nodes: []int{2}, At: 30, Recover: 60}},
		{Name: "partition", Params: &Partition{Groups: [][]int{{0, 3}}, From: 10, To: 20}},
		{Name: "delay", Params: &Delay{Prob: 0.3, Min: 1, Max: 3}},
	}
	if err := nw.SetFailures(fs); err != nil {
		t.Fatal(err)
	}
	return nw
}

// record writes the first rounds of nw as a trace file and returns its path.
func record(t testing.TB, nw *Network, rounds uint64, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var w = any(f).(interface{ Write([]byte) (int, error) })
	var gz *gzip.Writer
	if strings.HasSuffix(name, ".gz") {
		gz = gzip.NewWriter(f)
		w = gz
	}
	rec := NewTraceRecorder(w, nw, strings.Contains(name, ".jsonl"))
	rec.Comment("a test")
	if err := rec.RecordTo(rounds); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A recorded network replays exactly: the trace process, under the same
// failure processes, realizes the same receivers and delays in every
// round, asked in any order and from many goroutines at once — in both
// formats, compressed or not.
func TestTraceReplaysARecording(t *testing.T) {
	const n, rounds = 6, 200
	orig := failingNetwork(t, n, registry.Choice[LinkProcess]{Name: "gilbert-elliott", Params: &GilbertElliott{MeanBurst: 5, GoodDelivery: 1}})
	for _, name := range []string{"l.csv", "l.csv.gz", "l.jsonl", "l.jsonl.gz"} {
		t.Run(name, func(t *testing.T) {
			path := record(t, orig, rounds, name)
			replay := failingNetwork(t, n, registry.Choice[LinkProcess]{Name: "trace", Params: &Trace{File: path, End: "fail"}})
			if _, ok := replay.Process.(LinkTrace); !ok {
				t.Fatalf("Build left %T, not a bound trace", replay.Process)
			}
			ticks := make([]uint64, 0, 3*rounds)
			for k := range uint64(rounds) {
				ticks = append(ticks, k)
			}
			r := rand.New(rand.NewPCG(1, 2))
			for range 40 {
				ticks = append(ticks, r.Uint64N(rounds)) // going back reopens the file
			}
			var wg sync.WaitGroup
			errs := make(chan string, 8)
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var a, b []int
					for _, tick := range ticks {
						for i := range n {
							a, b = orig.Realize(i, tick, a), replay.Realize(i, tick, b)
							if !slices.Equal(a, b) {
								errs <- "receivers differ"
								return
							}
							for _, j := range a {
								if orig.Delay(i, j, tick) != replay.Delay(i, j, tick) {
									errs <- "delays differ"
									return
								}
							}
						}
					}
					_ = g
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatal(e)
			}
		})
	}
}

// The end policies: loop starts over, hold keeps the last round.
func TestTraceEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	src := "round,from,to,up\n0,0,1,1\n0,1,0,1\n2,0,1,0\n#! rounds=4\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string][]bool{
		"loop": {true, true, false, false, true, true, false, false, true},
		"hold": {true, true, false, false, false, false, false, false, false},
	}
	for end, w := range want {
		topo := registry.Choose[Topology]("stochastic-directed")
		topo.Params.(*Stochastic).Process = registry.Choice[LinkProcess]{Name: "trace", Params: &Trace{File: path, End: end}}
		nw, err := Build(topo, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		for tick, up := range w {
			if got := nw.Process.Up(1, 0, 1, 0.5, uint64(tick)); got != up {
				t.Errorf("%s: tick %d: up %v, want %v", end, tick, got, up)
			}
		}
		if got := nw.Process.(LinkTrace).Rounds(); got != 4 {
			t.Errorf("Rounds() = %d, want 4", got)
		}
	}
}

// Bad traces fail at Build with one line naming the file and line.
func TestTraceRejectsBadFiles(t *testing.T) {
	good := "round,from,to,up\n0,0,1,1\n0,1,0,1\n0,1,2,1\n0,2,1,1\n"
	var gzbuf bytes.Buffer
	zw := gzip.NewWriter(&gzbuf)
	zw.Write([]byte(good))
	for r := 1; r < 200; r++ {
		fmt.Fprintf(zw, "%d,0,1,%d\n", r, r%2)
	}
	zw.Close()
	truncated := gzbuf.Bytes()[:gzbuf.Len()-6]
	cases := []struct {
		name, src, want string
	}{
		{"unsorted", good + "5,0,1,0\n3,0,1,1\n", ":7: rounds out of order: round 3 after round 5"},
		{"range", good + "1,0,3,1\n", ":6: link 0→3: client ids must be in [0, 3)"},
		{"self", good + "1,2,2,1\n", ":6: self-link 2→2"},
		{"duplicate", good + "1,0,1,0\n1,0,1,1\n", ":7: duplicate entry for link 0→1 in round 1 (first on line 6)"},
		{"garbage", good + "1,0,x,1\n", ":6: not a change row"},
		{"header", "from,to\n", ":1: want the header"},
		{"up", good + "1,0,1,2\n", ":6: not a change row"},
		{"clients", "#! clients=4\n" + good, ":1: the trace is for 4 clients, the network has 3"},
		{"past end", "#! rounds=1\n" + good + "1,0,1,0\n", ":7: round 1 is past the declared rounds=1"},
		{"json garbage", `{"round":0,"from":0,"to":1,"up":true}` + "\n{\"round\":1,\"from\":0}\n", ":2: a change needs round, from, to and up"},
		{"json unknown", `{"round":0,"from":0,"to":1,"up":true,"x":1}` + "\n", ":1: not a links trace object"},
		{"truncated gzip", string(truncated), "truncated gzip stream"},
		{"gzip cut in its first line", string(gzbuf.Bytes()[:12]), ": truncated gzip stream"},
		{"damaged gzip header", "\x1f\x8b\x09\x00garbage, not gzip", ": a damaged gzip header"},
		{"empty", "", ": no change row and no rounds directive"},
		{"header only", "round,from,to,up\n", ": no change row and no rounds directive"},
		{"missing", "", ": no such file or directory"},
	}
	// Every trace error reads "FILE: what" or "FILE:LINE: what", the
	// line counted from 1, and says what in its own words.
	form := func(path string) *regexp.Regexp {
		return regexp.MustCompile(`(^|: )` + regexp.QuoteMeta(path) + `(:[1-9][0-9]*)?: [a-z]`)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.csv")
			if c.name != "missing" {
				if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			topo := registry.Choose[Topology]("stochastic-directed")
			topo.Params.(*Stochastic).Process = registry.Choice[LinkProcess]{Name: "trace", Params: &Trace{File: path, End: "fail"}}
			_, err := Build(topo, 3, 1)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), path+c.want) && !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if !form(path).MatchString(err.Error()) || strings.Contains(err.Error(), "gzip:") || strings.Contains(err.Error(), "links trace:") {
				t.Errorf("error %q does not read FILE[:LINE]: what", err)
			}
		})
	}
}

// A trace whose links leave a client unreachable fails like a
// disconnected network, naming the client.
func TestTraceChecksTheExpectedGraph(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	src := "round,from,to,up\n0,0,1,1\n0,1,0,1\n0,1,2,1\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	topo := registry.Choose[Topology]("stochastic-directed")
	topo.Params.(*Stochastic).Process = registry.Choice[LinkProcess]{Name: "trace", Params: &Trace{File: path, End: "fail"}}
	_, err := Build(topo, 3, 1)
	if err == nil || !strings.Contains(err.Error(), "clients [2] cannot reach client 0") {
		t.Fatalf("got %v", err)
	}
}

// The statistics of a small trace, counted by hand: link 0→1 is up in
// rounds 0–1 and 4–9 (one outage of 2 rounds), 1→0 in rounds 3–9 (a
// leading outage of 3).
func TestScanTraceStats(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	src := `{"clients":2}
{"round":0,"from":0,"to":1,"up":1}
{"round":2,"from":0,"to":1,"up":0}
{"round":3,"from":1,"to":0,"up":true,"delay":2}
{"round":4,"from":0,"to":1,"up":1}
{"rounds":10}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ScanTrace(path, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if s.Clients != 2 || s.Rounds != 10 || s.Changes != 4 || !s.Delays {
		t.Fatalf("summary %+v", s)
	}
	if !slices.Equal(s.Links, []int{1, 2}) || !slices.Equal(s.Up, []uint64{8, 7}) ||
		!slices.Equal(s.Outages, []uint64{1, 1}) || !slices.Equal(s.OutageRounds, []uint64{2, 3}) {
		t.Errorf("links %v up %v outages %v of %v rounds", s.Links, s.Up, s.Outages, s.OutageRounds)
	}
}

// Streaming a long trace keeps the heap flat: after 2·10⁵ rounds it holds
// no more than after 10³ (within 2 MB; the file is 10⁶ rows).
func TestTraceStreamsInFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 10⁶-row trace")
	}
	const n, rounds = 50, 200_000
	path := filepath.Join(t.TempDir(), "long.csv.gz")
	writeSyntheticTrace(t, path, n, rounds, 5)
	topo := registry.Choose[Topology]("stochastic-directed")
	topo.Params.(*Stochastic).Process = registry.Choice[LinkProcess]{Name: "trace", Params: &Trace{File: path, End: "fail"}}
	nw, err := Build(topo, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse)
	}
	var early float64
	up := 0
	for tick := range uint64(rounds) {
		if nw.Process.Up(1, 0, 1, 0.5, tick) {
			up++
		}
		if tick == 1000 {
			early = heap()
		}
	}
	if late := heap(); late > early+2e6 {
		t.Errorf("heap in use grew from %.1f MB at round 10³ to %.1f MB at round %d", early/1e6, late/1e6, rounds)
	}
	if up == 0 || up == rounds {
		t.Errorf("link 0→1 up in %d of %d rounds: the stream did not move", up, rounds)
	}
}
