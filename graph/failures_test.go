package graph

import (
	"math"
	"testing"

	"hgpsim/internal/registry"
)

// upFrequency realizes link i→j of nw over ticks rounds and returns the
// share of rounds it is up, the lengths of its down periods and the
// standard error of the share from the means of batches of consecutive
// rounds.
func upFrequency(nw *Network, i, j int, ticks uint64, batches int) (float64, []int, float64) {
	var recv []int
	up, run := 0, 0
	var downs []int
	per := ticks / uint64(batches)
	means := make([]float64, batches)
	for t := range ticks {
		recv = nw.Realize(i, t, recv)
		if contains(recv, j) {
			up++
			if b := int(t / per); b < batches {
				means[b] += 1 / float64(per)
			}
			if run > 0 {
				downs = append(downs, run)
			}
			run = 0
		} else {
			run++
		}
	}
	freq := float64(up) / float64(ticks)
	v := 0.0
	for _, m := range means {
		v += (m - freq) * (m - freq)
	}
	return freq, downs, math.Sqrt(v / float64(batches-1) / float64(batches))
}

// Every link process delivers each link with its stationary probability δ̄
// over many rounds, within 4 standard errors, so the processes compare at
// equal δ̄: every registered process with its defaults (read from the
// registry, so a new process is checked without editing this test) and
// chosen parameters of some. The standard error comes from batch means, so
// that it holds for processes whose rounds are correlated (bursts) without
// knowing by how much. The Gilbert–Elliott bad periods have the geometric
// length distribution of mean mean_burst.
func TestLinkProcessesKeepDeltaBar(t *testing.T) {
	const ticks, batches = 200000, 200
	type linkCase struct {
		name string
		proc LinkProcess
	}
	var cases []linkCase
	for _, kind := range LinkProcesses.Kinds() {
		cases = append(cases, linkCase{kind, LinkProcesses.MustNew(kind)})
	}
	cases = append(cases,
		linkCase{"burst", &Burst{Length: 8}},
		linkCase{"gilbert-elliott", &GilbertElliott{MeanBurst: 12, GoodDelivery: 1}},
		linkCase{"gilbert-elliott", &GilbertElliott{MeanBurst: 5, GoodDelivery: 0.95, BadDelivery: 0.2}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := c.proc.(Binder); ok {
				t.Skip("replays its data: its frequencies are the data's, not δ̄")
			}
			topo := &Stochastic{DeltaMin: 0.5, DeltaMax: 0.7, Directed: true,
				RandomLinks: RandomLinks{Process: registry.Choice[LinkProcess]{Name: c.name, Params: c.proc}}}
			nw, err := Build(registry.Choice[Topology]{Name: "stochastic-directed", Params: topo}, 3, 9)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range [][2]int{{0, 1}, {2, 1}} {
				p := nw.Prob[l[0]][l[1]]
				freq, downs, se := upFrequency(nw, l[0], l[1], ticks, batches)
				if math.Abs(freq-p) > 4*se {
					t.Errorf("link %v: up %.4f of the rounds, δ̄ = %.4f (4 SE = %.4f)", l, freq, p, 4*se)
				}
				ge, ok := c.proc.(*GilbertElliott)
				if !ok || ge.BadDelivery > 0 {
					continue
				}
				// Down periods are the bad periods: geometric with mean
				// mean_burst, so P(length ≥ k) = (1 − 1/L)^(k−1).
				mean := 0.0
				atLeast := 0
				for _, d := range downs {
					mean += float64(d)
					if d >= 10 {
						atLeast++
					}
				}
				mean /= float64(len(downs))
				if math.Abs(mean-ge.MeanBurst) > 4*ge.MeanBurst/math.Sqrt(float64(len(downs))) {
					t.Errorf("link %v: mean bad period %.2f rounds over %d periods, want %v", l, mean, len(downs), ge.MeanBurst)
				}
				want := math.Pow(1-1/ge.MeanBurst, 9)
				got := float64(atLeast) / float64(len(downs))
				if math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/float64(len(downs))) {
					t.Errorf("link %v: P(bad period ≥ 10) = %.3f, geometric %.3f", l, got, want)
				}
			}
		})
	}
}

// A Gilbert–Elliott chain cannot have bad periods so short that the good
// share needs a refresh probability above 1; Build says which link.
func TestGilbertElliottRefusesShortBursts(t *testing.T) {
	topo := &Stochastic{DeltaMin: 0.2, DeltaMax: 0.3, Directed: true,
		RandomLinks: RandomLinks{Process: registry.Choice[LinkProcess]{Name: "gilbert-elliott", Params: &GilbertElliott{MeanBurst: 2, GoodDelivery: 1}}}}
	if _, err := Build(registry.Choice[Topology]{Name: "stochastic-directed", Params: topo}, 3, 1); err == nil {
		t.Fatal("a chain with mean_burst 2 for links up 20–30 % of the time was accepted")
	}
}

// Churn keeps a node offline its share of the rounds, in periods of the
// mean length asked for; crash and partition act exactly on their
// schedules; an offline node reaches nobody and nobody reaches it.
func TestNodeFailures(t *testing.T) {
	const n, ticks = 4, 100000
	nw, err := Build(registry.Choose[Topology]("fully-connected"), n, 3)
	if err != nil {
		t.Fatal(err)
	}
	churn := &Churn{Share: 0.2, MeanOffline: 15}
	if err := nw.SetFailures([]registry.Choice[Failure]{{Name: "churn", Params: churn}}); err != nil {
		t.Fatal(err)
	}
	off, periods, run := 0, 0, 0
	var recv []int
	for tick := range uint64(ticks) {
		o := nw.Offline(2, tick)
		recv = nw.Realize(2, tick, recv)
		if o != (len(recv) == 0) {
			t.Fatalf("tick %d: offline %v but realizes %v", tick, o, recv)
		}
		if o {
			off++
			run++
			if r0 := nw.Realize(0, tick, nil); contains(r0, 2) {
				t.Fatalf("tick %d: node 0 reaches offline node 2", tick)
			}
		} else if run > 0 {
			periods++
			run = 0
		}
	}
	share := float64(off) / ticks
	if math.Abs(share-0.2) > 0.02 {
		t.Errorf("offline %.3f of the rounds, want 0.2", share)
	}
	if mean := float64(off) / float64(periods); math.Abs(mean-15) > 1.5 {
		t.Errorf("mean offline period %.2f rounds, want 15", mean)
	}

	crash := &Crash{Nodes: []int{1}, At: 10, Recover: 20}
	part := &Partition{Groups: [][]int{{0, 1}}, From: 5, To: 8}
	if err := nw.SetFailures([]registry.Choice[Failure]{{Name: "crash", Params: crash}, {Name: "partition", Params: part}}); err != nil {
		t.Fatal(err)
	}
	for tick := range uint64(30) {
		if got, want := nw.Offline(1, tick), tick >= 10 && tick < 20; got != want {
			t.Errorf("tick %d: node 1 offline %v, want %v", tick, got, want)
		}
		cut := tick >= 5 && tick < 8
		if r := nw.Realize(0, tick, nil); contains(r, 2) == cut || contains(r, 1) != !(tick >= 10 && tick < 20) {
			t.Errorf("tick %d: node 0 reaches %v (partition %v)", tick, r, cut)
		}
	}
}
