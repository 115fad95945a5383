package pdbo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/datasets"
	"hgpsim/optim"
)

// notLockstep hides Round.Lockstep from a VR-HGP, as a driver whose
// receivers may read a payload one round late would.
type notLockstep struct{ *VRHGP[float64] }

func (n notLockstep) strip(r *optim.Round) *optim.Round {
	c := *r
	c.Lockstep = false
	return &c
}

func (n notLockstep) Send(r *optim.Round, out optim.Outbox) error {
	return n.VRHGP.Send(n.strip(r), out)
}

func (n notLockstep) Premix(r *optim.Round, in []optim.Message) []optim.Mix[float64] {
	return n.VRHGP.Premix(n.strip(r), in)
}

func (n notLockstep) ReceiveMixed(r *optim.Round, in []optim.Message) error {
	return n.VRHGP.ReceiveMixed(n.strip(r), in)
}

// Under the sequential driver VR-HGP keeps two [u; w] buffers, not three,
// shares x with the linearization and keeps no H·u scratch of its own; the
// estimates have the bits of the three-buffer schedule.
func TestVRHGPLockstepKeepsTwoBuffers(t *testing.T) {
	for _, variant := range []Variant{AfterComm, BeforeComm} {
		for _, s := range []Sampling{Simultaneous, Alternate} {
			p := newHyperProblemDim(t, net("stochastic-directed"), 6, 5, variant, 0.3, 7)
			lock, loose := make([]HyperEstimator, len(p.lins)), make([]HyperEstimator, len(p.lins))
			for i, lin := range p.lins {
				lock[i] = NewVRHGP(lin, 0.9, 0.1, s)
				loose[i] = notLockstep{NewVRHGP(lin, 0.9, 0.1, s)}
			}
			got := runEstimators(t, p.nw, lock, 7)
			want := runEstimators(t, p.nw, loose, 7)
			for i := range got {
				for k := range got[i] {
					if math.Float64bits(got[i][k]) != math.Float64bits(want[i][k]) {
						t.Fatalf("%v, %v: client %d's estimate differs between two and three buffers", variant, s, i)
					}
				}
				h := lock[i].(*VRHGP[float64])
				if h.ring[2] != nil || h.l.hv != nil {
					t.Errorf("%v, %v: client %d made a third [u; w] or an H·u scratch under the sequential driver", variant, s, i)
				}
				if loose[i].(notLockstep).ring[2] == nil {
					t.Errorf("%v, %v: client %d wrote the payload of the round before without lock-step rounds", variant, s, i)
				}
			}
		}
	}
}

// vectorsHeld counts the d-vectors client c holds (a [u; w] counts two),
// each backing array once.
func vectorsHeld(c *Client[float64], d int) int {
	seen := map[*float64]bool{}
	count := 0
	add := func(vs ...[]float64) {
		for _, v := range vs {
			if len(v) >= d && !seen[&v[0]] {
				seen[&v[0]] = true
				count += len(v) / d
			}
		}
	}
	add(c.warm)
	if s := c.sgp; s != nil {
		add(s.ps.Vectors()...)
		add(s.grad, s.gx)
	}
	if h, ok := c.est.(*VRHGP[float64]); ok {
		add(h.ring[:]...)
		add(h.l.x, h.l.cy, h.l.hv, h.l.lin.Z, h.l.lin.X)
	}
	return count
}

// A PDBO client running VR-HGP under the sequential driver holds at most
// six d_x-vectors in every phase (docs/scale.md lists them).
func TestPDBOClientHoldsSixVectors(t *testing.T) {
	const n, d, k = 5, 6, 3
	nw := buildNet(t, net("stochastic-directed"), n, 2)
	r := rand.New(rand.NewPCG(3, 3))
	cfg := &Config{N: n, SGP: SGPConfig{Variant: AfterComm, LR: optim.Schedule{Kind: "constant", Base: 0.1}},
		Estimator: "vr-hgp", Alpha: 0.9, Beta: 0.1, Sampling: Simultaneous, HyperLR: 0.1,
		NewOptimizer: func() OuterOptimizer { return &SGD{LR: []float64{0.1, 0.1, 0.1}} }}
	x0 := make([]float64, d)
	clients := make([]*Client[float64], n)
	for i := range clients {
		clients[i] = NewClient(i, cfg, newQuadratic(r, d, k), datasets.ClientData{Train: noData, Val: noData, Test: noData}, x0)
	}
	d0 := must(optim.NewSequential(nw, func(i int) (optim.Client, error) { return clients[i], nil }))(t)
	d0.SetParallel(2)
	most := map[string]int{}
	phases := optim.Phases{{Name: "sgp", Rounds: 4}, {Name: "hypergradient", Rounds: 4, Tick: optim.Continue},
		{Name: "outer", Tick: optim.Continue}, {Name: "sgp", Rounds: 4, Tick: optim.Continue}}
	sink := &countingSink{clients: clients, d: d, most: most}
	if _, err := d0.Execute(context.Background(), &phases, sink); err != nil {
		t.Fatal(err)
	}
	t.Logf("most d-vectors a client held at the end of each phase: %v", most)
	for _, p := range []string{"sgp", "hypergradient", "outer"} {
		if most[p] == 0 || most[p] > 6 {
			t.Errorf("phase %s: a client held %d d-vectors, want 1 to 6", p, most[p])
		}
	}
}

// countingSink records, per phase, the most d-vectors a client holds when
// the phase ends.
type countingSink struct {
	optim.NoSink
	clients []*Client[float64]
	d       int
	most    map[string]int
}

func (s *countingSink) Finished(rep *optim.PhaseReport) error {
	for _, c := range s.clients {
		s.most[rep.Spec.Name] = max(s.most[rep.Spec.Name], vectorsHeld(c, s.d))
	}
	return nil
}
