package view

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// partitionScenario runs 6 fully connected clients whose links are all
// up, except that a partition cuts {0, 1, 2} from {3, 4, 5} in rounds
// 5 … 14: the only links down are the cut ones.
const partitionScenario = `name: partition-view
seed: 3
clients: 6
method: sgp
network:
  kind: fully-connected
  failures:
    - {kind: partition, groups: [[0, 1, 2]], from: 5, to: 15}
data: {classes: 3, features: 4, train: 20, val: 8, test: 8}
sgp: {rounds: 20, batch: 5, eval_every: 4}
`

// failuresScenario has random links, churn, a crash, a partition and
// delays (run/testdata/golden/failures.yaml, shorter).
const failuresScenario = `name: failures-view
seed: 21
clients: 8
method: pdbo-da
network:
  kind: stochastic-directed
  links: {kind: gilbert-elliott, mean_burst: 4}
  failures:
    - {kind: churn, nodes: [2, 5], offline: 0.2, mean_offline: 3}
    - {kind: crash, nodes: [6], at: 10, recover: 25}
    - {kind: partition, groups: [[0, 1, 2]], from: 5, to: 15}
    - {kind: delay, prob: 0.3, min: 1, max: 3}
data: {classes: 3, features: 4, train: 20, val: 8, test: 8}
sgp: {rounds: 30, batch: 5, eval_every: 10, lr: {schedule: constant, base: 0.2}}
hypergradient: {m: 6, eval_every: 3}
outer: {steps: 1}
`

// runScenario runs src into a new folder, recording its links there
// when record is set, and returns the folder.
func runScenario(t *testing.T, src string, record bool, sets ...string) string {
	t.Helper()
	var ss []scenarios.Set
	for _, s := range sets {
		set, err := scenarios.ParseSet(s)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, set)
	}
	sc, err := scenarios.ParseWith("test.yaml", []byte(src), ss)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	opt := run.Options{OutDir: dir}
	if record {
		opt.RecordLinks = filepath.Join(dir, "links.csv.gz")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := run.Execute(context.Background(), sc, opt); err != nil {
		t.Fatal(err)
	}
	return dir
}

func serve(t *testing.T, dir, token string) *httptest.Server {
	t.Helper()
	s, err := New(dir, token)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts
}

// get fetches path and decodes its JSON into v, returning the status.
func get(t *testing.T, ts *httptest.Server, path string, v any) int {
	t.Helper()
	r, err := http.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode == http.StatusOK && v != nil {
		if err := json.NewDecoder(r.Body).Decode(v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return r.StatusCode
}

type roundsJSON struct {
	From   uint64 `json:"from"`
	Rounds []struct {
		Up    []byte   `json:"up"`
		Cut   []byte   `json:"cut"`
		Off   []int    `json:"off"`
		Delay [][2]int `json:"delay"`
	} `json:"rounds"`
}

func bitSet(b []byte, k int) bool { return k>>3 < len(b) && b[k>>3]&(1<<(k&7)) != 0 }

func TestPartitionRounds(t *testing.T) {
	ts := serve(t, runScenario(t, partitionScenario, false), "")
	var info Info
	if code := get(t, ts, "/api/info", &info); code != 200 {
		t.Fatalf("info: status %d", code)
	}
	if info.Clients != 6 || len(info.Links) != 30 || info.Source != "realized" || info.Rounds != 20 || !info.PhasesExact || !info.Done {
		t.Fatalf("info: %d clients, %d links, source %s, %d rounds, exact %v, done %v; want 6, 30, realized, 20, true, true",
			info.Clients, len(info.Links), info.Source, info.Rounds, info.PhasesExact, info.Done)
	}
	if !reflect.DeepEqual(info.Groups, [][]int{{0, 1, 2}, {3, 4, 5}}) {
		t.Errorf("groups %v, want [[0 1 2] [3 4 5]]", info.Groups)
	}
	var rs roundsJSON
	if code := get(t, ts, "/api/rounds?from=0&count=100", &rs); code != 200 || len(rs.Rounds) != 20 {
		t.Fatalf("rounds: status %d, %d rounds; want 200 and the run's 20", code, len(rs.Rounds))
	}
	for tick, st := range rs.Rounds {
		inside := tick >= 5 && tick < 15
		for k, l := range info.Links {
			cross := (l[0] < 3) != (l[1] < 3)
			if up := bitSet(st.Up, k); up == (inside && cross) {
				t.Errorf("round %d, link %d→%d: up %v", tick, l[0], l[1], up)
			}
			if cut := bitSet(st.Cut, k); cut != (inside && cross) {
				t.Errorf("round %d, link %d→%d: cut %v", tick, l[0], l[1], cut)
			}
		}
	}
}

// A run's recording and the realization from its scenario and seed give
// the same rounds: links, offline clients and delays.
func TestRecordedEqualsRealized(t *testing.T) {
	recorded := runScenario(t, failuresScenario, true)
	realized := runScenario(t, failuresScenario, false)
	a, b := serve(t, recorded, ""), serve(t, realized, "")
	var ia, ib Info
	get(t, a, "/api/info", &ia)
	get(t, b, "/api/info", &ib)
	if ia.Source != "recorded" || ib.Source != "realized" || ia.Rounds != ib.Rounds || ia.Rounds != 67 {
		t.Fatalf("sources %s, %s over %d, %d rounds; want recorded, realized, 67", ia.Source, ib.Source, ia.Rounds, ib.Rounds)
	}
	var ra, rb roundsJSON
	get(t, a, "/api/rounds?from=0&count=67", &ra)
	get(t, b, "/api/rounds?from=0&count=67", &rb)
	if !reflect.DeepEqual(ra, rb) {
		t.Fatal("the recorded rounds differ from the realized ones")
	}
	offline, delayed, down := 0, 0, 0
	for _, st := range ra.Rounds {
		offline += len(st.Off)
		delayed += len(st.Delay)
		for k := range ia.Links {
			if !bitSet(st.Up, k) {
				down++
			}
		}
	}
	if offline == 0 || delayed == 0 || down == 0 {
		t.Errorf("offline %d, delayed %d, down %d: the scenario has all three", offline, delayed, down)
	}
}

func TestRoundsWindows(t *testing.T) {
	ts := serve(t, runScenario(t, partitionScenario, false, "sgp.rounds=1200", "sgp.eval_every=600"), "")
	var rs roundsJSON
	if get(t, ts, "/api/rounds?from=0&count=100000", &rs); len(rs.Rounds) != maxWindow {
		t.Errorf("a request for all rounds got %d, want a window of %d", len(rs.Rounds), maxWindow)
	}
	// A single round (computed as asked) is the same round of a block
	// (computed and kept).
	var one roundsJSON
	if get(t, ts, "/api/rounds?from=10&count=1", &one); len(one.Rounds) != 1 || one.Rounds[0].Cut == nil || !reflect.DeepEqual(one.Rounds[0], rs.Rounds[10]) {
		t.Errorf("round 10 alone differs from round 10 of the window, or has no cut links")
	}
	if get(t, ts, "/api/rounds?from=1100&count=512", &rs); len(rs.Rounds) != 100 || rs.From != 1100 {
		t.Errorf("the last window: %d rounds from %d, want 100 from 1100", len(rs.Rounds), rs.From)
	}
	if get(t, ts, "/api/rounds?from=1200&count=5", &rs); len(rs.Rounds) != 0 {
		t.Errorf("past the end: %d rounds, want none", len(rs.Rounds))
	}
	for _, q := range []string{"from=-1&count=3", "from=0&count=0", "from=x&count=2", "count=2"} {
		if code := get(t, ts, "/api/rounds?"+q, nil); code != http.StatusBadRequest {
			t.Errorf("rounds?%s: status %d, want 400", q, code)
		}
	}
}

func TestMetricsFollow(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(partitionScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, dir, "")
	var m Metrics
	if get(t, ts, "/api/metrics?offset=0", &m); m.Next != 0 || len(m.Rows) != 0 {
		t.Fatalf("before the run writes: next %d, %d rows", m.Next, len(m.Rows))
	}
	f, err := os.Create(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := `{"outer":0,"phase":"sgp","round":3,"client":"all","train_loss":0.5}` + "\n"
	f.WriteString(line + line + `{"outer":0,"phase":"sgp","round":7,"cli`) // the last line half written
	get(t, ts, "/api/metrics?offset=0", &m)
	if len(m.Rows) != 2 || m.Next != int64(2*len(line)) {
		t.Fatalf("whole lines: %d rows to offset %d, want 2 to %d", len(m.Rows), m.Next, 2*len(line))
	}
	f.WriteString(`ent":"all","train_loss":0.25}` + "\n")
	get(t, ts, "/api/metrics?offset="+itoa(m.Next), &m)
	if len(m.Rows) != 1 || !strings.Contains(string(m.Rows[0]), `"round":7`) {
		t.Fatalf("after the line completed: %d rows (%s), want the round 7 line", len(m.Rows), m.Rows)
	}
	// Chunks: at most limit bytes of whole lines, at least one line.
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, limit := range []int{5, len(line), len(line) + 1} {
		mm, err := readMetrics(r, "metrics.jsonl", 0, limit)
		if err != nil || len(mm.Rows) != 1 || mm.Next != int64(len(line)) {
			t.Errorf("limit %d: %v, %d rows to %d; want 1 row to %d", limit, err, len(mm.Rows), mm.Next, len(line))
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Nothing outside the folder is served: not by "..", an absolute path, an
// encoded path, nor a symbolic link that leads out.
func TestConfinement(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "run")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o644)
	os.WriteFile(filepath.Join(dir, "plot.png"), []byte("png"), 0o644)
	os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(partitionScenario), 0o644)
	outside := filepath.Join(base, "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "scenario.yaml"), []byte(partitionScenario), 0o644)
	os.WriteFile(filepath.Join(outside, "metrics.jsonl"), []byte(`{"secret":1}`+"\n"), 0o644)
	for name, target := range map[string]string{"link.txt": secret, "abs.txt": "/etc/passwd", "up": outside, "rel.txt": "../secret.txt"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ts := serve(t, dir, "")
	if code := get(t, ts, "/file/plot.png", nil); code != 200 {
		t.Fatalf("a file inside: status %d", code)
	}
	for _, p := range []string{"/file/../secret.txt", "/file/%2e%2e/secret.txt", "/file/..%2fsecret.txt", "/file//etc/passwd",
		"/file/%2fetc%2fpasswd", "/file/link.txt", "/file/abs.txt", "/file/rel.txt", "/file/up/scenario.yaml", "/file/sub",
		"/file/sub/../../secret.txt", "/api/info?run=..%2foutside", "/api/info?run=up", "/api/info?run=" + outside,
		"/api/metrics?run=up", "/api/metrics?run=../outside", "/api/metrics?run=" + outside, "/api/rounds?run=up&from=0&count=1"} {
		r, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(r)
		if r.StatusCode == 200 || strings.Contains(body, "secret") || strings.Contains(body, "root:") {
			t.Errorf("%s: status %d, body %q", p, r.StatusCode, body)
		}
	}
	// Without a token, only requests for a loopback host are served.
	req, _ := http.NewRequest("GET", ts.URL+"/file/plot.png", nil)
	req.Host = "rebound.example:8080"
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusForbidden {
		t.Errorf("a request for another host: %v, %v; want 403", err, r.Status)
	} else {
		r.Body.Close()
	}
	// With a token, nothing is served without it.
	tts := serve(t, dir, "s3cret")
	if code := get(t, tts, "/file/plot.png", nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: status %d, want 401", code)
	}
	if code := get(t, tts, "/file/plot.png?token=s3cret", nil); code != 200 {
		t.Errorf("with the token: status %d, want 200", code)
	}
	if code := get(t, ts, "/file/plot.png", nil); code != 200 {
		t.Errorf("no token set: status %d", code)
	}
}

func readAll(r *http.Response) string {
	defer r.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	return b.String()
}

// Without phases.jsonl, the phases come from a CSV recording's comments,
// the same; without either, they are inferred from metrics.jsonl and not
// exact (the outer phase, which evaluates nothing, is missing).
func TestPhasesWithoutPhasesFile(t *testing.T) {
	dir := runScenario(t, failuresScenario, true)
	var want, got, inferred Info
	get(t, serve(t, dir, ""), "/api/info", &want)
	if err := os.Remove(filepath.Join(dir, run.PhasesFile)); err != nil {
		t.Fatal(err)
	}
	get(t, serve(t, dir, ""), "/api/info", &got)
	if !want.PhasesExact || !got.PhasesExact || !reflect.DeepEqual(got.Phases, want.Phases) || got.Rounds != want.Rounds {
		t.Errorf("from the recording: %+v (%d rounds), want %+v (%d rounds)", got.Phases, got.Rounds, want.Phases, want.Rounds)
	}
	if err := os.Remove(filepath.Join(dir, "links.csv.gz")); err != nil {
		t.Fatal(err)
	}
	get(t, serve(t, dir, ""), "/api/info", &inferred)
	if inferred.PhasesExact || len(inferred.Phases) != len(want.Phases)-1 || inferred.Rounds != want.Rounds-1 {
		t.Errorf("inferred: %+v, exact %v; want the phases without the outer one", inferred.Phases, inferred.PhasesExact)
	}
}
