package actors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/pdbo"
)

func network(t testing.TB, kind string, n int) *graph.Network {
	t.Helper()
	topo := registry.Choose[graph.Topology](kind)
	if s, ok := topo.Params.(*graph.StaticUndirected); ok {
		s.Weights = "metropolis"
	}
	nw, err := graph.Build(topo, n, 17)
	if err != nil {
		t.Fatal(err)
	}
	return nw
}

// sgpClients builds a fresh set of SGP clients on synthetic data.
func sgpClients(t testing.TB, n int, variant pdbo.Variant) ([]*pdbo.SGP[float64], []optim.Behaviour) {
	t.Helper()
	return sgpClientsOf(t, n, 6, variant)
}

// sgpClientsOf is sgpClients with features inputs: a model of
// 3·features + 3 parameters.
func sgpClientsOf(t testing.TB, n, features int, variant pdbo.Variant) ([]*pdbo.SGP[float64], []optim.Behaviour) {
	t.Helper()
	data, err := datasets.Synthetic(datasets.SyntheticSpec{Clients: n, Classes: 3, Features: features,
		Train: 40, Val: 10, Test: 10, Alpha: 0.5, Separation: 0.7, Shift: 1, Noise: 1}, 9)
	if err != nil {
		t.Fatal(err)
	}
	m := models.NewSoftmax[float64](features, 3, 1e-3)
	x0 := make([]float64, m.Dim())
	m.Init(x0, rng.New(9, rng.Global, rng.PurposeInit))
	cfg := pdbo.SGPConfig{Variant: variant, BatchSize: 8,
		LR: optim.Schedule{Kind: "multistep", Base: 0.1, Milestones: []int{30}, Gamma: 0.1}}
	c := make([]*pdbo.SGP[float64], n)
	b := make([]optim.Behaviour, n)
	for i := range c {
		c[i] = pdbo.NewSGP(i, n, m.Clone(), data[i], x0, cfg, 9)
		b[i] = c[i]
	}
	return c, b
}

// recorder keeps a deep copy of every event and every phase report.
type recorder struct {
	events  []optim.RoundEvent
	reports []phaseReport
}

// phaseReport is a PhaseReport without its stats (valid only during
// Finished) but with their aggregate.
type phaseReport struct {
	optim.PhaseReport
	last optim.Aggregate
}

func (r *recorder) Evaluated(ev *optim.RoundEvent) error {
	cp := *ev
	cp.Clients = make([]optim.Stats, len(ev.Clients))
	for i, s := range ev.Clients {
		cp.Clients[i] = s
		cp.Clients[i].X = append([]float64(nil), s.X...)
		if s.X32 != nil {
			cp.Clients[i].X32 = append([]float32(nil), s.X32...)
		}
	}
	r.events = append(r.events, cp)
	return nil
}

func (r *recorder) Finished(rep *optim.PhaseReport) error {
	cp := phaseReport{*rep, rep.SummarizeLast()}
	cp.Last = nil
	r.reports = append(r.reports, cp)
	return nil
}

// newRuntime starts a runtime over fixed behaviours.
func newRuntime(t testing.TB, nw *graph.Network, bs []optim.Behaviour, opt Options) *Runtime {
	t.Helper()
	factory, _ := optim.FixedClients(bs)
	rt, err := New(nw, factory, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

func sgpPhases(k, rounds, eval int) *optim.Phases {
	ps := make(optim.Phases, k)
	for i := range ps {
		ps[i] = optim.PhaseSpec{Name: "sgp", Rounds: rounds, EvalEvery: eval, Tick: optim.Continue, Track: true}
	}
	return &ps
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestActorsMatchSequential is the test that keeps the runtime honest: the
// same behaviours, network and seed give bit-identical states, estimates,
// events and traffic under both drivers, over two consecutive phases,
// whether the clients are hosted by one actor, by groups of unequal sizes
// or one actor each.
func TestActorsMatchSequential(t *testing.T) {
	const n = 16
	for _, kind := range []string{"stochastic-directed", "stochastic-undirected", "static-undirected", "fully-connected"} {
		for _, v := range []pdbo.Variant{pdbo.BeforeComm, pdbo.AfterComm} {
			for _, groups := range []int{1, 5, n} {
				t.Run(fmt.Sprintf("%s/%v/groups=%d", kind, v, groups), func(t *testing.T) {
					nw := network(t, kind, n)
					seqC, seqB := sgpClients(t, n, v)
					actC, actB := sgpClients(t, n, v)
					var seqRec, actRec recorder

					seqFactory, _ := optim.FixedClients(seqB)
					seq, err := optim.NewSequential(nw, seqFactory)
					if err != nil {
						t.Fatal(err)
					}
					rt := newRuntime(t, nw, actB, Options{RoundTimeout: 10 * time.Second, Groups: groups})
					ctx := context.Background()
					tr1, err := seq.Execute(ctx, sgpPhases(2, 25, 7), &seqRec)
					if err != nil {
						t.Fatal(err)
					}
					tr2, err := rt.Execute(ctx, sgpPhases(2, 25, 7), &actRec)
					if err != nil {
						t.Fatal(err)
					}
					if tr1 != tr2 {
						t.Errorf("traffic: sequential %+v, actors %+v", tr1, tr2)
					}
					if tr1.Messages == 0 {
						t.Fatal("no traffic at all: the comparison would prove nothing")
					}
					for k := range seqRec.reports {
						a, b := seqRec.reports[k].Delivered, actRec.reports[k].Delivered
						if a.Rounds != 25 || a.Rounds != b.Rounds {
							t.Fatalf("phase %d: delivery records over %d and %d rounds", k, a.Rounds, b.Rounds)
						}
						for i := range a.Count {
							if !sameBits(a.Count[i], b.Count[i]) || !sameBits(a.WeightSum[i], b.WeightSum[i]) {
								t.Fatalf("phase %d: delivery records differ for sender %d", k, i)
							}
						}
					}
					for i := range seqC {
						z1, w1 := seqC[i].State()
						z2, w2 := actC[i].State()
						if !sameBits(z1, z2) || math.Float64bits(w1) != math.Float64bits(w2) {
							t.Fatalf("client %d: states differ between drivers", i)
						}
						p1, d1 := seqC[i].Estimates()
						p2, d2 := actC[i].Estimates()
						if !sameBits(p1, p2) || !sameBits(d1, d2) {
							t.Fatalf("client %d: Alg. 2 estimates differ between drivers", i)
						}
					}
					if len(seqRec.events) != len(actRec.events) || len(seqRec.events) != 2*4 {
						t.Fatalf("events: sequential %d, actors %d, want 8", len(seqRec.events), len(actRec.events))
					}
					for k := range seqRec.events {
						a, b := seqRec.events[k], actRec.events[k]
						if a.Round != b.Round || a.Traffic != b.Traffic {
							t.Fatalf("event %d: %d/%+v vs %d/%+v", k, a.Round, a.Traffic, b.Round, b.Traffic)
						}
						for i := range a.Clients {
							sa, sb := a.Clients[i], b.Clients[i]
							if !sameBits(sa.X, sb.X) || math.Float64bits(sa.TrainLoss) != math.Float64bits(sb.TrainLoss) ||
								math.Float64bits(sa.TestAcc) != math.Float64bits(sb.TestAcc) {
								t.Fatalf("event %d client %d: stats differ", k, i)
							}
						}
					}
				})
			}
		}
	}
}

// faulty wraps a behaviour and misbehaves at one round.
type faulty struct {
	optim.Behaviour
	round int
	mode  string
	hang  time.Duration // how long "hang" sleeps; 5 s when 0
}

func (f *faulty) Send(r *optim.Round, out optim.Outbox) error {
	if r.Index == f.round && f.mode == "panic" {
		panic("boom")
	}
	if r.Index == f.round && f.mode == "hang" {
		time.Sleep(cmp.Or(f.hang, 5*time.Second))
	}
	if r.Index == f.round && f.mode == "slow" {
		time.Sleep(time.Second) // computing, longer than the round timeout
	}
	return f.Behaviour.Send(r, out)
}

func (f *faulty) Receive(r *optim.Round, in []optim.Message) error {
	if r.Index == f.round && f.mode == "nan" {
		return optim.ErrNonFinite
	}
	return f.Behaviour.Receive(r, in)
}

func TestClientFailuresNameClientAndRound(t *testing.T) {
	const n = 6
	for _, mode := range []string{"panic", "nan", "hang", "slow"} {
		// One actor for all clients (client 3 in the middle of its group)
		// and one actor each.
		for _, groups := range []int{1, n} {
			t.Run(fmt.Sprintf("%s/groups=%d", mode, groups), func(t *testing.T) {
				nw := network(t, "stochastic-directed", n)
				_, b := sgpClients(t, n, pdbo.AfterComm)
				b[3] = &faulty{Behaviour: b[3], round: 5, mode: mode}
				rt := newRuntime(t, nw, b, Options{RoundTimeout: 300 * time.Millisecond, Groups: groups})
				_, err := rt.Execute(context.Background(), &optim.Phases{{Name: "sgp", Rounds: 10}}, optim.NoSink{})
				if mode == "slow" {
					// Progress is measured, not wall time: a client that
					// computes for 1 s with a 300 ms timeout is busy, not hung.
					if err != nil {
						t.Fatalf("a slow but progressing run failed: %v", err)
					}
					return
				}
				if err == nil {
					t.Fatal("run succeeded despite a failing client")
				}
				msg := err.Error()
				switch mode {
				case "hang":
					if !strings.Contains(msg, "round 5") || !strings.Contains(msg, "[3]") || !strings.Contains(msg, "client 3 has been inside one call") {
						t.Errorf("timeout error does not name round 5 and client 3: %v", msg)
					}
				default:
					var ce *optim.ClientError
					if !errors.As(err, &ce) || ce.Client != 3 || ce.Round != 5 || ce.Phase != "sgp" {
						t.Errorf("want ClientError{client 3, phase sgp, round 5}, got %v", err)
					}
				}
				if mode == "nan" && !errors.Is(err, optim.ErrNonFinite) {
					t.Errorf("error does not wrap ErrNonFinite: %v", err)
				}
			})
		}
	}
}

func TestContextCancelStopsPhase(t *testing.T) {
	nw := network(t, "stochastic-directed", 4)
	_, b := sgpClients(t, 4, pdbo.AfterComm)
	rt := newRuntime(t, nw, b, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	stopAt := 3
	sink := optim.SinkFunc(func(ev *optim.RoundEvent) error {
		if ev.Round == stopAt {
			cancel()
		}
		return nil
	})
	_, err := rt.Execute(ctx, &optim.Phases{{Name: "sgp", Rounds: 100000, EvalEvery: 1}}, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

// panicSink panics in Evaluated at round k.
type panicSink struct {
	optim.NoSink
	round int
}

func (p panicSink) Evaluated(ev *optim.RoundEvent) error {
	if ev.Round == p.round {
		panic("sink failure")
	}
	return nil
}

// panicProgram panics when asked for the phase after the first.
type panicProgram struct{ asked int }

func (p *panicProgram) Next(done *optim.PhaseReport) (*optim.PhaseSpec, error) {
	p.asked++
	if p.asked == 2 {
		panic("program failure")
	}
	return &optim.PhaseSpec{Name: "sgp", Rounds: 3, Tick: optim.Continue}, nil
}

// A panic in the sink or in the program fails the run with an error saying
// where — it used to hang the run forever, since it happened inside the
// supervisor's Receive. No round timeout is set: the failure must not rely
// on one. The sequential driver reports the same.
func TestSupervisorPanicsFailTheRun(t *testing.T) {
	const n = 5
	for _, drv := range []string{"actors", "sequential"} {
		for _, c := range []struct {
			name string
			prog optim.Program
			sink optim.Sink
			want string
		}{
			{"sink", &optim.Phases{{Name: "sgp", Rounds: 10, EvalEvery: 1}}, panicSink{round: 4}, "sink failure"},
			{"program", &panicProgram{}, optim.NoSink{}, "program failure"},
		} {
			t.Run(drv+"/"+c.name, func(t *testing.T) {
				nw := network(t, "stochastic-directed", n)
				_, b := sgpClients(t, n, pdbo.AfterComm)
				var d optim.Driver
				if drv == "actors" {
					d = newRuntime(t, nw, b, Options{})
				} else {
					factory, _ := optim.FixedClients(b)
					s, err := optim.NewSequential(nw, factory)
					if err != nil {
						t.Fatal(err)
					}
					d = s
				}
				done := make(chan error, 1)
				go func() {
					_, err := d.Execute(context.Background(), c.prog, c.sink)
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "panic") {
						t.Fatalf("want an error naming the panic %q, got %v", c.want, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the run hangs after a panic")
				}
			})
		}
	}
}

// enterFails refuses to enter a phase.
type enterFails struct{}

func (enterFails) Enter(*optim.PhaseSpec) (optim.Behaviour, error) {
	return nil, errors.New("no such phase here")
}

// An error entering a phase, and a factory that cannot build a client, name
// the client.
func TestClientBuildAndEnterErrors(t *testing.T) {
	nw := network(t, "stochastic-directed", 4)
	_, err := New(nw, func(i int) (optim.Client, error) {
		if i == 2 {
			return nil, errors.New("no data")
		}
		return enterFails{}, nil
	}, Options{})
	if err == nil || !strings.Contains(err.Error(), "building client 2: no data") {
		t.Fatalf("want the factory's error naming client 2, got %v", err)
	}
	rt, err := New(nw, func(int) (optim.Client, error) { return enterFails{}, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	_, err = rt.Execute(context.Background(), &optim.Phases{{Name: "sgp", Rounds: 2}}, optim.NoSink{})
	var ce *optim.ClientError
	if !errors.As(err, &ce) || ce.Phase != "sgp" || !strings.Contains(err.Error(), "no such phase here") {
		t.Fatalf("want a ClientError for phase sgp, got %v", err)
	}
}
