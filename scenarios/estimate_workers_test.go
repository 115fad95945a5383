package scenarios

import (
	"strings"
	"testing"
)

// part returns the bytes of the named part of live (0 when absent).
func part(live []ResourcePart, name string) int64 {
	var b int64
	for _, p := range live {
		if p.Name == name {
			b += p.Bytes
		}
	}
	return b
}

// Over workers, the estimate is per process: a worker holds its block's
// data, clients and messages, the supervisor none of them; the limit
// applies to the larger process.
func TestEstimatePerProcess(t *testing.T) {
	const one = "name: big\nclients: 100000\nnetwork: {kind: sparse-stochastic, support: {kind: torus, rows: 250}}\n" +
		"data: {kind: synthetic, classes: 4, features: 10, train: 16, val: 4, test: 4}\nsgp: {rounds: 2}\n"
	single := Estimate(parseOK(t, one))
	if single.Processes != nil {
		t.Fatalf("one process: %d processes", len(single.Processes))
	}
	over := Estimate(parseOK(t, one+"runtime: {workers: [a:1, b:2, c:3, d:4]}\n"))
	if len(over.Processes) != 2 {
		t.Fatalf("over 4 workers: %d kinds of process, want supervisor and worker", len(over.Processes))
	}
	sup, wk := over.Processes[0], over.Processes[1]
	if sup.Name != "supervisor" || wk.Name != "worker" || wk.Count != 4 || wk.Clients != 25000 {
		t.Fatalf("processes %+v, %+v", sup, wk)
	}
	for _, name := range []string{"data", "client state"} {
		if got, want := part(wk.Live, name), part(single.Live, name)/4; got != want {
			t.Errorf("a worker's %s: %d bytes, want a quarter of one process's, %d", name, got, want)
		}
		if b := part(sup.Live, name); b != 0 {
			t.Errorf("the supervisor's %s: %d bytes, want none", name, b)
		}
	}
	// Payloads go worker to worker: the supervisor holds none, only the
	// stats of an evaluation (every client's x), and a worker its block's.
	if b := part(sup.Live, "round messages"); b != 0 {
		t.Errorf("the supervisor's round messages: %d bytes, want none", b)
	}
	if got, want := part(sup.Live, "evaluation stats"), int64(100000*100); got != want {
		t.Errorf("the supervisor's evaluation stats: %d bytes, want n·100 = %d (no parameters)", got, want)
	}
	if got, want := part(wk.Live, "evaluation parameters (worker 0)"), int64(100000*8*44); got != want {
		t.Errorf("worker 0's evaluation parameters: %d bytes, want n·8d = %d", got, want)
	}
	if b := part(wk.Live, "round messages"); b == 0 || b > int64(2*2*100000*(8*44+20)) {
		t.Errorf("a worker's round messages: %d bytes, want more than none and less than a round's payloads twice", b)
	}
	if over.PeakBytes != max(sup.PeakBytes, wk.PeakBytes) || wk.PeakBytes >= single.PeakBytes {
		t.Errorf("peaks: supervisor %d, worker %d, run %d, one process %d", sup.PeakBytes, wk.PeakBytes, over.PeakBytes, single.PeakBytes)
	}
	s := over.String()
	for _, want := range []string{"in the supervisor", "in each of 4 workers of up to 25000 clients"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
	// A limit between a worker's peak and one process's: refused in one
	// process, accepted over workers.
	limit := max(over.PeakBytes, single.PeakBytes/2) + 1
	if limit >= single.PeakBytes {
		t.Fatalf("no limit separates one process (%d) from the workers (%d)", single.PeakBytes, over.PeakBytes)
	}
	if _, err := Check("big.yaml", parseOK(t, one), CheckOptions{MaxMemory: limit}); err == nil {
		t.Errorf("one process under %d bytes: accepted", limit)
	}
	if _, err := Check("big.yaml", parseOK(t, one+"runtime: {workers: [a:1, b:2, c:3, d:4]}\n"), CheckOptions{MaxMemory: limit}); err != nil {
		t.Errorf("over workers under %d bytes: %v", limit, err)
	}
}

// The supervisor computes the dense oracle, and so needs every node's
// data; the sparse bound of 10⁶ clients holds over workers too.
func TestEstimatePerProcessOracleAndMillion(t *testing.T) {
	sc := parseOK(t, "clients: 20\nmodel: {head: label-weights}\nhypergradient: {estimator: hgp, oracle: true}\nruntime: {workers: [a:1, b:2]}\n")
	r := Estimate(sc)
	if len(r.Processes) != 2 || part(r.Processes[0].Live, "data") == 0 || part(r.Processes[0].Live, "dense oracle") == 0 {
		t.Errorf("with the oracle the supervisor holds every node's data and the oracle: %v", r)
	}
	if part(r.Processes[1].Live, "dense oracle") != 0 {
		t.Errorf("a worker computes no oracle: %v", r)
	}
	big := parseOK(t, "name: big\nclients: 1000000\nnetwork: {kind: sparse-stochastic, support: {kind: torus}}\nsgp: {rounds: 2}\nruntime: {workers: [a:1, b:2, c:3, d:4]}\n")
	r = Estimate(big)
	for _, p := range r.Processes {
		if b := part(p.Live, "network"); b > 1<<30 {
			t.Errorf("%s: network %d bytes for 10⁶ clients on a torus, want O(links)", p.Name, b)
		}
	}
	if r.Processes[1].Clients != 250000 {
		t.Errorf("10⁶ clients over 4 workers: blocks of %d", r.Processes[1].Clients)
	}
}
