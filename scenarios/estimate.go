package scenarios

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/pdbo"
)

// Resources is what a run is expected to need, computed from the scenario
// alone (nothing is built or read). The model is deliberately simple and
// errs on the high side; docs/scenarios.md states it.
type Resources struct {
	// Live is the estimated live heap in bytes, by part.
	Live []ResourcePart
	// PeakBytes is the process's expected peak memory. In one process
	// (hgpsim run and resume) it is HeapLimit and the runtime's own
	// memory; in processes without a limit twice the live heap, since Go's
	// collector lets the heap grow to twice what survived the last cycle
	// (GOGC = 100).
	PeakBytes int64
	// HeapLimit is the soft memory limit hgpsim run and resume give the Go
	// runtime (unless GOMEMLIMIT is set; a sweep gives --jobs times its
	// largest run's), so that the heap stays near the live heap instead
	// of doubling: the live heap and a quarter more (at least heapSlack).
	// Over workers it is the supervisor's (Processes has each kind's).
	HeapLimit int64
	// Flops counts the floating-point work of the whole run, and Seconds
	// turns it into time on one core at the rates of its operations
	// (estimate_work.go).
	Flops   float64
	Seconds float64
	// NoTime, when set, says why the computation is not estimated: the
	// work model is PDBO's (its SGP and hyper-gradient rounds), and another
	// algorithm's rounds would be counted wrong.
	NoTime string
	// Processes splits the memory by process when the clients live in
	// worker processes (runtime.workers): the supervisor, then a worker
	// hosting the largest block. Live and PeakBytes are then the larger
	// process's, which the memory limit applies to. Nil in one process.
	Processes []ProcessResources
}

// ProcessResources is the memory of one kind of process of a run over
// workers.
type ProcessResources struct {
	Name    string // "supervisor" or "worker"
	Count   int    // processes of this kind
	Clients int64  // clients each hosts (the largest block)
	Live    []ResourcePart
	// HeapLimit is the soft memory limit the process gives the Go
	// runtime: the worker when the supervisor's Setup arrives (unless
	// GOMEMLIMIT is set), and the supervisor as hgpsim run does.
	HeapLimit int64
	// PeakBytes is the process's expected peak under that limit.
	PeakBytes int64
}

// ResourcePart is one term of the memory estimate.
type ResourcePart struct {
	Name  string
	Bytes int64
}

// AssumedFlops is the single-core rate of what the work model does not
// measure: PDBO's mixing (memory-bound) and the experiments' estimates.
// It was 5e9, calibrated with the personalization runs of
// docs/results.md; the kernels doubled the rate of those runs'
// operations. It errs on the safe side.
const AssumedFlops = 1e10

// LiveBytes sums the parts.
func (r Resources) LiveBytes() int64 {
	var s int64
	for _, p := range r.Live {
		s += p.Bytes
	}
	return s
}

// String is one line: the peak, its largest parts and the time; over
// workers, the peak of the supervisor and of each worker.
func (r Resources) String() string {
	var b strings.Builder
	if len(r.Processes) == 0 {
		fmt.Fprintf(&b, "about %s peak memory (live: ", Bytes(r.PeakBytes))
		writeParts(&b, r.Live)
	}
	for k, p := range r.Processes {
		if k > 0 {
			b.WriteString("), ")
		}
		if p.Name == "supervisor" {
			fmt.Fprintf(&b, "about %s peak memory in the supervisor (live: ", Bytes(p.PeakBytes))
		} else {
			fmt.Fprintf(&b, "%s in each of %d %ss of up to %d clients (live: ", Bytes(p.PeakBytes), p.Count, p.Name, p.Clients)
		}
		writeParts(&b, p.Live)
	}
	if r.NoTime != "" {
		fmt.Fprintf(&b, "); computation not estimated (%s)", r.NoTime)
	} else if r.Seconds < 1 {
		b.WriteString(") and under a second of computation")
	} else {
		fmt.Fprintf(&b, ") and about %s of computation on one core", Duration(r.Seconds))
	}
	return b.String()
}

// Estimate computes the resources a valid scenario needs.
func Estimate(sc Scenario) Resources {
	if sc.Experiment != nil {
		return sc.Experiment.Params.Estimate(&sc)
	}
	n := int64(sc.Nodes())
	features, classes := sc.Shape()
	dx := sc.Model.Arch.Params.Dim(features, classes)
	members := int64(1)
	if k := int64(sc.Model.K); strings.HasPrefix(sc.Model.Head.Name, "ensemble") {
		members = k
	}
	dx *= members
	// One example's forward pass: 2·d_x flops for the dense models; a
	// convolution reuses its weights at every position, so a CNN says
	// what it costs.
	fwd, workspace := 2*float64(dx), 0.0
	if c, ok := sc.Model.Arch.Params.(models.Coster); ok {
		cost := c.Cost(features, classes, max(sc.SGP.Batch, sc.Hypergradient.Batch, 1))
		fwd = cost.ForwardFlops * float64(members)
		ws := models.WorkspaceOf[float64](cost)
		if sc.Float32() {
			ws = models.WorkspaceOf[float32](cost)
		}
		workspace = float64(ws) * float64(members)
	}
	links := sc.Network.Topology.Params.LinkCount(sc.Nodes()) + n
	examples := sc.Data.Source.Params.Examples(sc.Nodes())

	var r Resources
	shape := modelShape{dx: dx, workspace: workspace}
	if w := int64(len(sc.Runtime.Workers)); w > 0 && sc.Experiment == nil {
		// Contiguous blocks as even as they come: the largest holds
		// ⌈n/W⌉ clients.
		block := (n + w - 1) / w
		sup := memory(sc, shape, process{role: supervisorRole})
		wk := memory(sc, shape, process{role: workerRole, hosted: block})
		r.Processes = []ProcessResources{
			bounded(ProcessResources{Name: "supervisor", Count: 1, Live: sup}),
			bounded(ProcessResources{Name: "worker", Count: int(w), Clients: block, Live: wk}),
		}
		r.Live, r.PeakBytes, r.HeapLimit = sup, r.Processes[0].PeakBytes, r.Processes[0].HeapLimit
		if p := r.Processes[1]; p.PeakBytes > r.PeakBytes {
			r.Live, r.PeakBytes = p.Live, p.PeakBytes
		}
	} else {
		r.Live = memory(sc, shape, process{role: oneProcess, hosted: n})
		r.HeapLimit, r.PeakBytes = heapBound(r.LiveBytes())
	}

	// Mixing costs what the links up in a round carry, not every link.
	up := float64(links - n)
	if f, ok := sc.Network.Topology.Params.(graph.UpFraction); ok {
		up *= f.UpFraction()
	}
	r.Flops, r.Seconds = work(sc, fwd, float64(dx), float64(examples), up+float64(n))
	// Every byte of the peak is first touched once: page faults and the
	// kernel's zeroing cost system time.
	touched := float64(r.PeakBytes)
	if len(r.Processes) > 0 {
		touched = 0
		for _, p := range r.Processes {
			touched += float64(p.Count) * float64(p.PeakBytes)
		}
	}
	r.Seconds += touched * touchCost
	if !ownsSection(sc.Algorithm.Params, "sgp") {
		r.Flops, r.Seconds = 0, 0
		r.NoTime = "the work model counts PDBO's rounds, not algorithm " + sc.Algorithm.Name + "'s"
	}
	return r
}

// heapBound returns the soft memory limit for a process whose live heap
// is live, and the process's peak under it: the collector holds the heap
// near the limit instead of letting it double.
func heapBound(live int64) (limit, peak int64) {
	limit = live + max(live/4, heapSlack)
	return limit, min(2*live, limit) + runtimeOverhead
}

// bounded fills p's HeapLimit and PeakBytes from its live heap.
func bounded(p ProcessResources) ProcessResources {
	p.HeapLimit, p.PeakBytes = heapBound(liveBytes(p.Live))
	return p
}

// modelShape is what the memory model needs of the model: d_x (all
// ensemble members) and a client's workspace in bytes.
type modelShape struct {
	dx        int64
	workspace float64
}

// role is a process's part in a run.
type role int

const (
	oneProcess     role = iota // everything, in one process
	supervisorRole             // the program, router and sink of a run over workers
	workerRole                 // a block of clients of a run over workers
)

// process is one process of a run: its role and, for one process or a
// worker, how many clients it hosts.
type process struct {
	role   role
	hosted int64
}

// memory is the live heap of process p of sc, by part. Every process
// builds the whole network; a worker builds its block's data and clients
// only (run.Hosting), the supervisor none of them unless the dense oracle,
// which it computes, needs every node's data. Algorithms with a server
// load every node's data everywhere.
func memory(sc Scenario, m modelShape, p process) []ResourcePart {
	n := int64(sc.Nodes())
	features, _ := sc.Shape()
	links := sc.Network.Topology.Params.LinkCount(sc.Nodes()) + n
	src := sc.Data.Source.Params
	var live []ResourcePart
	add := func(name string, b float64) {
		live = append(live, ResourcePart{Name: name, Bytes: int64(math.Min(b, math.MaxInt64/4))})
	}
	nn := float64(n) * float64(n)
	sparse := false
	if sp, ok := sc.Network.Topology.Params.(graph.Sparse); ok {
		sparse = sp.Sparse()
	}
	// share is the part of the clients' per-link state the process holds.
	hosted := float64(p.hosted)
	share := hosted / float64(n)
	router := p.role != workerRole // delivers the round's messages
	// δ̄ matrix (dense topologies only), its out-neighbour lists (int and
	// float per link) and fixed mixing weights; one delivery record per
	// link in flight where the router runs (a worker realizes its
	// clients' links only).
	inFlight := 40 * float64(links) * share
	if router {
		inFlight = 40 * float64(links)
	}
	add("network", 8*nn*(1-boolf(sparse))+16*float64(links)+8*nn*boolf(isStatic(sc))+inFlight)
	// Alg. 2 counters: p̄_ij and δ̄_{j→i} sums, two n-vectors per client
	// up to optim.DenseCounts clients, else a 4-byte key and a sum per
	// link and counter.
	if n <= optim.DenseCounts {
		add("p̄/δ̄ counters", 16*float64(n)*hosted)
	} else {
		add("p̄/δ̄ counters", 24*float64(links)*share)
	}
	// The exact p̄ is built by every process that plans estimates: true,
	// and by the process that checks the estimates (the sink's).
	if sc.Hypergradient.Estimates == "true" || (router && sc.Nodes() <= pdbo.ExactEstimateLimit) {
		add("exact p̄", 8*nn)
	}
	if sc.Hypergradient.Estimator != "none" {
		// The hyper-gradient phase's link weights (p̄, δ̄, their links and
		// coefficients, what was sent to whom): per link used, in and out,
		// where the counts are; n-vectors per client up to
		// optim.DenseCounts clients.
		if n <= optim.DenseCounts {
			add("hyper-gradient link weights", 8*4.125*float64(n)*hosted)
		} else {
			add("hyper-gradient link weights", 2*56*float64(links)*share)
		}
	}
	// Per client: the d_x-vectors of the phase that holds the most
	// (docs/scale.md lists them); and the initial point the clients share.
	// These, the scratch vectors, payloads and checkpointed iterates are
	// in the scenario's precision (elem bytes an element).
	elem := float64(sc.ElemBytes())
	add("client state", elem*clientVectors(sc)*hosted*float64(m.dx))
	add("initial point", elem*min(hosted, 1)*float64(m.dx))
	// What a client holds whatever d: its behaviour, batcher, streams,
	// buffers and actor; measured as the live heap of 10⁵ softmax
	// clients (d = 44) on a torus, less the parts above.
	add("client bookkeeping", clientOverhead*hosted)
	// A call's model workspaces and its scratch vector are taken from
	// pools and returned: one set per call running at once.
	calls := callsAtOnce(sc, p.hosted)
	add("model workspaces", (m.workspace+elem*float64(m.dx))*calls)
	examples := src.Examples(sc.Nodes())
	switch {
	case sc.Algorithm.Params.Server():
	case p.role == workerRole:
		examples = datasets.BlockExamples(src, sc.Nodes(), int(p.hosted))
	case p.role == supervisorRole && !sc.Hypergradient.Oracle:
		examples = 0
	}
	add("data", float64(examples)*float64(datasets.ExampleBytes(src, features)))
	if sc.Runtime.CheckpointEvery > 0 && sc.Outer.Steps > 0 && !sc.Outer.Restart {
		// Writing a checkpoint of warm-started clients: every client's
		// encoded iterate, and the file's buffer holding them again (a
		// worker encodes its block's once).
		if router {
			add("checkpoint", 2*elem*float64(m.dx)*float64(n))
		} else {
			add("checkpoint", elem*float64(m.dx)*hosted)
		}
	}
	if sc.Hypergradient.Oracle && router {
		d := float64(n) * float64(m.dx)
		add("dense oracle", 3*8*d*d)
	}
	if p.role == oneProcess {
		return keptData(sc, live, features)
	}
	if p.role == supervisorRole {
		// Payloads go worker to worker: the supervisor holds control
		// messages and, at an evaluation, every client's stats without
		// its parameters (worker 0 computes the consensus distance).
		add("evaluation stats", float64(n)*100)
		// Per client: its actor's address, mailbox and watchdog entry,
		// its stats; measured at 10⁵ clients over 4 workers.
		add("client bookkeeping", supervisorOverhead*float64(n))
	} else {
		// A worker's own payloads (each vector once, about 40 bytes of
		// headers per delivered message), encoded and decoded, and the
		// payloads other blocks send it: at most one per link into its
		// block, at most every other client's, for two rounds (a batch
		// may arrive a round early).
		payload := elem*float64(m.dx) + 20
		own := 2 * (2*hosted*payload + 40*float64(links)*share)
		in := 2 * min(float64(n)-hosted, float64(links)*share) * payload
		add("round messages", own+in)
		// Worker 0, the largest process, holds every client's parameters
		// at an evaluation for the consensus distance (in float64, as
		// evaluations report them in either precision).
		add("evaluation parameters (worker 0)", 8*float64(m.dx)*float64(n))
	}
	return live
}

// clientVectors is the most d_x-vectors a client holds at once: an SGP
// phase's z, x, two payloads, the gradient and the outer gradient's
// scratch; VR-HGP's x (shared with the SGP), c^y and two [u; w] under the
// sequential driver, three under the actor runtime; HGP's and exact
// backpropagation's x, c^y, u, its next value, the mix, two payloads and
// H·u.
func clientVectors(sc Scenario) float64 {
	switch sc.Hypergradient.Estimator {
	case "vr-hgp":
		if sc.Runtime.DriverName() != "sequential" {
			return 8
		}
	case "hgp", "exact":
		return 8
	}
	return 6
}

// callsAtOnce is how many clients' calls run at once in a process hosting
// hosted clients: the sequential driver's goroutines, or the cores.
func callsAtOnce(sc Scenario, hosted int64) float64 {
	p := int64(runtime.GOMAXPROCS(0))
	if sc.Runtime.DriverName() == "sequential" && sc.Runtime.Parallel > 0 {
		p = int64(sc.Runtime.Parallel)
	}
	return float64(min(p, hosted))
}

// liveBytes sums parts.
func liveBytes(parts []ResourcePart) int64 {
	return Resources{Live: parts}.LiveBytes()
}

// writeParts writes the four largest parts.
func writeParts(b *strings.Builder, live []ResourcePart) {
	parts := append([]ResourcePart(nil), live...)
	sort.SliceStable(parts, func(a, b int) bool { return parts[a].Bytes > parts[b].Bytes })
	shown := 0
	for _, p := range parts {
		if p.Bytes <= 0 || shown == 4 {
			continue
		}
		if shown > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s %s", p.Name, Bytes(p.Bytes))
		shown++
	}
}

// ownsSection reports whether algorithm a takes its parameters from the
// scenario's top-level section key.
func ownsSection(a optim.Algorithm, key string) bool {
	o, ok := a.(optim.SectionOwner)
	if !ok {
		return false
	}
	for _, k := range o.Sections() {
		if k == key {
			return true
		}
	}
	return false
}

// heapSlack is the least room a memory limit leaves above the estimated
// live heap (with 24 MiB the collector of the Table-1 setting, 114 MiB
// estimated live, ran almost without pause: 632 s of CPU against 498 s), and runtimeOverhead what the process holds beyond its heap
// (the binary, stacks, the runtime's structures).
const (
	heapSlack       = 256 << 20
	runtimeOverhead = 32 << 20
)

// clientOverhead is the measured heap of one client beyond its vectors.
const clientOverhead = 6.5 * 1024

// supervisorOverhead is what the supervisor of worker processes holds per
// client beyond the round's messages.
const supervisorOverhead = 2 * 1024

func isStatic(sc Scenario) bool {
	switch sc.Network.Topology.Name {
	case "fully-connected", "static-undirected":
		return true
	}
	return false
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// networkCheckNeedsBuild reports whether validation must build the network
// to check what building it checks: Assumptions 2 and 6, and every link's
// δ̄ against a link process that cannot realize every one (graph.Build
// asks its ValidateLink, as a run does).
func networkCheckNeedsBuild(sc Scenario) bool {
	if l, ok := sc.Network.Topology.Params.(interface {
		Links() registry.Choice[graph.LinkProcess]
	}); ok {
		if _, checks := l.Links().Params.(interface{ ValidateLink(p float64) error }); checks {
			return true
		}
	}
	c, ok := sc.Network.Topology.Params.(graph.ConnectedByConstruction)
	return !ok || !c.ConnectedByConstruction()
}
