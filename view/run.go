package view

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"hgpsim/graph"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// Phase is one line of a run's phase list: the part of a phase that
// covered rounds [Tick, Tick+Rounds), its rounds counted from Offset
// within the phase.
type Phase struct {
	Phase  string `json:"phase"`
	Step   int    `json:"step"`
	Tick   uint64 `json:"tick"`
	Rounds int    `json:"rounds"`
	Offset int    `json:"offset"`
}

// Info is what the page needs to draw a run before any round: the
// clients and where they sit, the expected links, the failure schedule
// and the phases.
type Info struct {
	Kind    string `json:"kind"` // "run"
	Name    string `json:"name"`
	Clients int    `json:"clients"`
	Network string `json:"network"`
	Seed    uint64 `json:"seed"`
	// X and Y place client i at (X[i], Y[i]) in the unit square.
	X []float64 `json:"x"`
	Y []float64 `json:"y"`
	// Groups are the first partition's groups (the rest included), in
	// layout order; empty without a partition.
	Groups [][]int `json:"groups"`
	// Links lists the expected directed links [from, to], from ≠ to; a
	// round's states index this list.
	Links [][2]int `json:"links"`
	// Source says where the rounds' link states come from: "recorded"
	// (the run's links.csv.gz), "realized" (the scenario and seed, again)
	// or "none" (the scenario could not be rebuilt: NetworkError says why).
	Source       string `json:"source"`
	NetworkError string `json:"network_error,omitempty"`
	// Failures is the scenario's failure list as written there.
	Failures []map[string]any `json:"failures"`
	// Phases lists the phases with their rounds; PhasesExact is false
	// when they were inferred from metrics.jsonl (a run without
	// phases.jsonl), which misses phases that evaluate nothing.
	Phases      []Phase `json:"phases"`
	PhasesExact bool    `json:"phases_exact"`
	// Rounds is the rounds known so far (the end of the last phase).
	Rounds uint64 `json:"rounds"`
	// Done: the run wrote summary.json.
	Done bool `json:"done"`
	// Window is the block of rounds the page asks for at once (a request
	// may ask for up to 512).
	Window int `json:"window"`
	// Divergence is summary.json's divergence record, when it has one.
	Divergence json.RawMessage `json:"divergence,omitempty"`
}

// runView is a run folder opened for viewing. Its network is built once;
// graph.Network is safe for concurrent use, so requests share it.
type runView struct {
	root   *os.Root // the served folder: every file is checked or opened through it
	rel    string   // the run's folder in root
	dir    string
	info   Info
	nw     *graph.Network
	rowOf  [][]int // rowOf[i][r]: index in Info.Links of the r-th non-self receiver of i
	recvOf [][]int // the same receivers

	mu     sync.Mutex        // guards blocks and clock
	blocks map[uint64]*block // computed blocks of rounds, by first round
	clock  uint64            // counts block uses, for evicting the least recent
	slots  chan struct{}     // bounds the blocks computed at once, one a core
}

// openRun reads a run folder: its scenario, network and phases. A
// scenario that cannot be rebuilt leaves the page without links, not
// without curves.
func openRun(root *os.Root, rel, dir, name string) (*runView, error) {
	rv := &runView{root: root, rel: rel, dir: dir, info: Info{Kind: "run", Name: name, Source: "none", Window: blockRounds}, blocks: map[uint64]*block{},
		slots: make(chan struct{}, runtime.GOMAXPROCS(0))}
	scPath := filepath.Join(dir, "scenario.yaml")
	if !rv.has("scenario.yaml") {
		return nil, fmt.Errorf("%s is not a run folder: no scenario.yaml", name)
	}
	rv.info.Failures = readFailures(scPath)
	rv.info.Links, rv.info.Groups, rv.info.X, rv.info.Y = [][2]int{}, [][]int{}, []float64{}, []float64{}
	if err := rv.buildNetwork(scPath); err != nil {
		rv.info.NetworkError = err.Error()
	}
	rv.refresh()
	return rv, nil
}

// has reports whether the run's folder has the regular file name, inside
// the served folder (a symbolic link out of it does not count): files
// read by name are checked with has first.
func (rv *runView) has(name string) bool {
	st, err := rv.root.Stat(path.Join(rv.rel, name))
	return err == nil && st.Mode().IsRegular()
}

// open opens a file of the run's folder through the root.
func (rv *runView) open(name string) (*os.File, error) {
	return rv.root.Open(path.Join(rv.rel, name))
}

// recording returns the run's links recording, "" when there is none.
func (rv *runView) recording() string {
	for _, n := range []string{"links.csv.gz", "links.jsonl.gz"} {
		if rv.has(n) {
			return filepath.Join(rv.dir, n)
		}
	}
	return ""
}

// buildNetwork rebuilds the run's network: with its recording in place of
// the link process when it has one (the recording already holds the
// failures' effect; applying them again changes nothing), otherwise as
// the run built it, whose realizations are a pure function of the seed
// and the round.
func (rv *runView) buildNetwork(scPath string) error {
	var sets []scenarios.Set
	source := "realized"
	if rec := rv.recording(); rec != "" {
		set, err := run.ReplayLinks(rec)
		if err != nil {
			return err
		}
		sets, source = append(sets, set), "recorded"
	}
	sc, err := scenarios.LoadWith(scPath, sets)
	if err != nil {
		return err
	}
	rv.info.Clients, rv.info.Network, rv.info.Seed = sc.Nodes(), sc.Network.Topology.Name, sc.Seed
	var nw *graph.Network
	if sc.Algorithm.Params != nil && !sc.Algorithm.Params.Server() {
		// The algorithm may train over another network than the
		// scenario's (run.Build says which); without data, since
		// Hosting(0, 0) reads none.
		r, err := run.Build(sc, run.Hosting(0, 0))
		if err != nil {
			return err
		}
		nw = r.Net
	} else if nw, err = scenarios.BuildNetwork(sc); err != nil {
		return err
	}
	rv.nw, rv.info.Source = nw, source
	n := nw.N
	rv.info.Clients = n
	rv.rowOf, rv.recvOf = make([][]int, n), make([][]int, n)
	for i := range n {
		js, _ := nw.Out(i)
		for _, j := range js {
			if j != i {
				rv.rowOf[i] = append(rv.rowOf[i], len(rv.info.Links))
				rv.recvOf[i] = append(rv.recvOf[i], j)
				rv.info.Links = append(rv.info.Links, [2]int{i, j})
			}
		}
	}
	rv.info.Groups = partitionGroups(nw)
	rv.info.X, rv.info.Y = layout(n, rv.info.Groups, starHub(rv.info.Network, rv.info.Links, n))
	return nil
}

// refresh re-reads what a running run changes: its phases and whether it
// finished.
func (rv *runView) refresh() {
	ph, exact := rv.readPhases()
	if ph == nil {
		ph = []Phase{} // the page reads a list, even before the first phase ends
	}
	rv.info.Phases, rv.info.PhasesExact = ph, exact
	rv.info.Rounds = 0
	for _, p := range ph {
		rv.info.Rounds = max(rv.info.Rounds, p.Tick+uint64(p.Rounds))
	}
	b, err := rv.root.ReadFile(path.Join(rv.rel, "summary.json"))
	rv.info.Done = err == nil
	if err == nil {
		var s struct {
			Divergence json.RawMessage `json:"divergence"`
		}
		if json.Unmarshal(b, &s) == nil {
			rv.info.Divergence = s.Divergence
		}
	}
}

// readFailures returns the scenario's network.failures as written, for
// display.
func readFailures(path string) []map[string]any {
	sc, err := scenarios.Load(path)
	if err != nil {
		return []map[string]any{}
	}
	out := []map[string]any{}
	for _, f := range sc.Network.Failures {
		b, err := yaml.Marshal(f.Params)
		m := map[string]any{}
		if err == nil && yaml.Unmarshal(b, &m) == nil {
			for k, v := range m {
				if e, ok := v.(map[string]any); ok && len(e) == 0 {
					delete(m, k) // an embedded struct without fields
				}
			}
			m["kind"] = f.Name
			out = append(out, m)
		}
	}
	return out
}

// readPhases reads phases.jsonl; without it, the phases are inferred from
// metrics.jsonl (each phase as long as its last evaluated round, which
// is its last round) and not exact.
func (rv *runView) readPhases() ([]Phase, bool) {
	f, err := rv.open(run.PhasesFile)
	if err == nil {
		defer f.Close()
		var out []Phase
		seen := map[Phase]bool{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var p Phase
			if json.Unmarshal(sc.Bytes(), &p) != nil || seen[p] {
				continue // a half-written last line, or a part run again after a resume
			}
			seen[p] = true
			out = append(out, p)
		}
		sort.SliceStable(out, func(a, b int) bool { return out[a].Tick < out[b].Tick })
		return out, true
	}
	if rec := rv.recording(); strings.HasSuffix(rec, ".csv.gz") {
		if ph := phasesOfRecording(rec); len(ph) > 0 {
			return ph, true
		}
	}
	return rv.inferPhases(), false
}

// phasesOfRecording reads the phases off a CSV links recording's
// comments ("# phase sgp, step 0: from round 0"), each phase lasting
// until the next one starts and the last until the recording's end
// ("#! rounds=67").
func phasesOfRecording(name string) []Phase {
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	gz, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil
	}
	var out []Phase
	var end uint64
	sc := bufio.NewScanner(gz)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '#' {
			continue
		}
		var p Phase
		if n, _ := fmt.Sscanf(string(line), "# phase %s step %d: from round %d", &p.Phase, &p.Step, &p.Tick); n == 3 {
			p.Phase = strings.TrimSuffix(p.Phase, ",")
			out = append(out, p)
		} else if n, _ := fmt.Sscanf(string(line), "#! rounds=%d", &end); n == 1 {
			continue
		}
	}
	if sc.Err() != nil || end == 0 {
		return nil
	}
	for k := range out {
		next := end
		if k+1 < len(out) {
			next = out[k+1].Tick
		}
		if next < out[k].Tick {
			return nil
		}
		out[k].Rounds = int(next - out[k].Tick)
	}
	return out
}

// inferPhases reads the phases off metrics.jsonl's aggregate rows.
func (rv *runView) inferPhases() []Phase {
	f, err := rv.open("metrics.jsonl")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []Phase
	var tick uint64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		var r struct {
			Outer  int    `json:"outer"`
			Phase  string `json:"phase"`
			Round  int    `json:"round"`
			Client any    `json:"client"`
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Client != "all" {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].Phase == r.Phase && out[k].Step == r.Outer && r.Round >= out[k].Rounds {
			tick += uint64(r.Round + 1 - out[k].Rounds)
			out[k].Rounds = r.Round + 1
			continue
		}
		out = append(out, Phase{Phase: r.Phase, Step: r.Outer, Tick: tick, Rounds: r.Round + 1})
		tick += uint64(r.Round + 1)
	}
	return out
}

// partitionGroups returns the groups of the network's first partition,
// the nodes in no group as one more, in their listed order.
func partitionGroups(nw *graph.Network) [][]int {
	for _, f := range nw.Failures {
		p, ok := f.(*graph.Partition)
		if !ok {
			continue
		}
		in := make([]bool, nw.N)
		var gs [][]int
		for _, g := range p.Groups {
			gs = append(gs, append([]int(nil), g...))
			for _, v := range g {
				in[v] = true
			}
		}
		var rest []int
		for i := range nw.N {
			if !in[i] {
				rest = append(rest, i)
			}
		}
		if len(rest) > 0 {
			gs = append(gs, rest)
		}
		for _, g := range gs {
			sort.Ints(g)
		}
		return gs
	}
	return [][]int{}
}

// starHub returns the hub of a star (the node every link touches), -1
// for other networks.
func starHub(kind string, links [][2]int, n int) int {
	if kind != "star" || n < 3 {
		return -1
	}
	deg := make([]int, n)
	for _, l := range links {
		deg[l[0]]++
	}
	hub := 0
	for i, d := range deg {
		if d > deg[hub] {
			hub = i
		}
	}
	return hub
}

// layout places the clients on a circle in client order, so that a ring
// stays a ring; a partition's groups are kept together, each its own arc
// with a gap between arcs; a star's hub sits in the middle.
func layout(n int, groups [][]int, hub int) (xs, ys []float64) {
	xs, ys = make([]float64, n), make([]float64, n)
	order := make([]int, 0, n)
	var gapAfter []bool
	if len(groups) > 1 {
		for _, g := range groups {
			for k, v := range g {
				order = append(order, v)
				gapAfter = append(gapAfter, k == len(g)-1)
			}
		}
	} else {
		for i := range n {
			order = append(order, i)
			gapAfter = append(gapAfter, false)
		}
	}
	slots := 0
	for k, v := range order {
		if v == hub {
			continue
		}
		slots++
		if gapAfter[k] {
			slots++
		}
	}
	pos := 0
	for k, v := range order {
		if v == hub {
			xs[v], ys[v] = 0.5, 0.5
			continue
		}
		a := 2*math.Pi*float64(pos)/float64(max(slots, 1)) - math.Pi/2
		xs[v], ys[v] = 0.5+0.45*math.Cos(a), 0.5+0.45*math.Sin(a)
		pos++
		if gapAfter[k] {
			pos++
		}
	}
	return xs, ys
}
