package fbo

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"hgpsim/graph"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/optimtest"
)

// runCheckpointed runs alg on a fresh setup (from resume, when not nil)
// with a checkpoint at every outer-step boundary, and returns the events,
// the checkpoints and, for each, the number of events before it.
func runCheckpointed(t *testing.T, alg optim.Algorithm, star *graph.Star, resume *optim.Checkpoint) (*optimtest.Recorder, []*optim.Checkpoint, []int) {
	t.Helper()
	s := fboSetup(t, 6, star, 0.1)
	factory, prog, err := alg.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	log := &optimtest.Recorder{T: t}
	var cps []*optim.Checkpoint
	var marks []int
	cp := &optim.Checkpoints{Program: prog, Every: 1, Resume: resume, Save: func(c *optim.Checkpoint) error {
		cps = append(cps, c)
		marks = append(marks, len(log.Events))
		return nil
	}}
	d, err := optim.NewSequential(s.Net, func(i int) (optim.Client, error) {
		c, err := factory(i)
		if err != nil {
			return nil, err
		}
		return optim.Resumable(c, c, i), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Execute(context.Background(), cp, cp.Sink(log)); err != nil {
		t.Fatal(err)
	}
	if cp.Skipped != "" {
		t.Fatalf("%T: checkpoints skipped: %s", alg, cp.Skipped)
	}
	return log, cps, marks
}

func checkpointAlgorithms() map[string]optim.Algorithm {
	p := fboTestParams(2, 7) // 7 outer iterations in phases of 2: 3 checkpoints
	p.Batch, p.Participation = 4, 0.5
	sgd := p
	sgd.Lower = "sgd"
	lf := p
	lf.Lower, lf.LowerLocal = "sgd", 2
	code := p
	code.Redraw, code.LowerLocal = true, 3
	return map[string]optim.Algorithm{
		"fbo-aggitd-svrg":       &AggITD{Params: p},
		"fbo-aggitd-sgd":        &AggITD{Params: sgd},
		"fednest-stochastic":    &FedNest{Params: p, Neumann: 3, Variant: "stochastic"},
		"fednest-deterministic": &FedNest{Params: p, Neumann: 2, Variant: "deterministic"},
		"lfednest":              &LFedNest{Params: lf, Neumann: 2},
		// The released code's choices: dropout (mask keys from a client
		// stream that must be saved), redraws, local steps, its Neumann.
		"fednest-released-code": withCodeModel{&FedNest{Params: code, Neumann: 2, Variant: "released"}},
		"fbo-aggitd-code":       withCodeModel{&AggITD{Params: code}},
	}
}

// A run resumed from any of its checkpoints on freshly built parts
// reports exactly what the uninterrupted run reported after that
// checkpoint, and takes the same later checkpoints, byte for byte. The
// upload links lose messages, so the server keeps aggregates across
// rounds and phases.
func TestFBOResumeIsBitIdentical(t *testing.T) {
	star := &graph.Star{Prob: 1, ToHub: 0.7}
	for name, alg := range checkpointAlgorithms() {
		t.Run(name, func(t *testing.T) {
			full, cps, marks := runCheckpointed(t, alg, star, nil)
			if len(cps) != 3 {
				t.Fatalf("%d checkpoints, want 3", len(cps))
			}
			for k, cp := range cps {
				got, later, _ := runCheckpointed(t, alg, star, cp)
				want := full.Events[marks[k]:]
				if len(got.Events) != len(want) {
					t.Fatalf("resumed from checkpoint %d: %d events, want %d", k, len(got.Events), len(want))
				}
				for e := range want {
					if !bytes.Equal(got.Events[e], want[e]) {
						t.Fatalf("resumed from checkpoint %d: event %d differs", k, e)
					}
				}
				if len(later) != len(cps)-k-1 {
					t.Fatalf("resumed from checkpoint %d: %d later checkpoints, want %d", k, len(later), len(cps)-k-1)
				}
				for j, c := range later {
					w := cps[k+1+j]
					if !bytes.Equal(c.Program, w.Program) || c.Next.Step != w.Next.Step || c.Next.Tick != w.Next.Tick {
						t.Errorf("resumed from checkpoint %d: checkpoint %d's program differs", k, k+1+j)
					}
					for i := range w.Clients {
						if !bytes.Equal(c.Clients[i], w.Clients[i]) {
							t.Errorf("resumed from checkpoint %d: checkpoint %d's client %d differs", k, k+1+j, i)
						}
					}
				}
			}
		})
	}
}

// LoadState refuses, with an error, a state that does not fit the part.
func TestFBOLoadStateRejectsMismatches(t *testing.T) {
	star := &graph.Star{Prob: 1}
	p := fboTestParams(2, 4)
	p.Batch = 4
	parts := func(alg optim.Algorithm, hidden int) (optim.Client, optim.Client, optim.Program) {
		s := fboSetup(t, 4, star, 0.1)
		if hidden != 3 { // another model: d_x and d_λ change
			s.Model = models.NewHyperRep[float64](4, hidden, 3, 0.1, false)
			s.X0 = make([]float64, s.Model.DimX())
		}
		f, prog, err := alg.Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := f(0)
		if err != nil {
			t.Fatal(err)
		}
		c, err := f(1)
		if err != nil {
			t.Fatal(err)
		}
		return srv, c, prog
	}
	save := func(s any) []byte {
		b, err := s.(optim.Stateful).SaveState()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	agg := &AggITD{Params: p}
	srv, cl, prog := parts(agg, 3)
	srvB, clB, progB := save(srv), save(cl), save(prog)
	for _, c := range []struct {
		name string
		to   any
		b    []byte
		want string
	}{
		{"truncated server", srv, srvB[:len(srvB)/2], "decoding"},
		{"truncated client", cl, clB[:len(clB)/2], "decoding"},
		{"truncated program", prog, progB[:3], "decoding"},
		{"garbage", srv, []byte("not a state"), "decoding"},
		{"server into a client", cl, srvB, ""},
		{"client into the server", srv, clB, ""},
	} {
		optimtest.Reject(t, c.name, c.to.(optim.Stateful), c.b, c.want)
	}

	// Another model's dimensions.
	srv2, cl2, _ := parts(agg, 5)
	if err := srv2.(optim.Stateful).LoadState(srvB); err == nil || !strings.Contains(err.Error(), "length") {
		t.Errorf("server state of another model: got %v", err)
	}
	if err := cl2.(optim.Stateful).LoadState(clB); err == nil || !strings.Contains(err.Error(), "length") {
		t.Errorf("client state of another model: got %v", err)
	}
	// Another method's server.
	srv3, _, _ := parts(&FedNest{Params: p, Neumann: 2, Variant: "deterministic"}, 3)
	if err := srv3.(optim.Stateful).LoadState(srvB); err == nil {
		t.Error("an FBO-AggITD server state loaded into a FedNest server")
	}
	// Another client, or another data size.
	s := fboSetup(t, 4, star, 0.1)
	f, _, _ := agg.Plan(s)
	c2, _ := f(2)
	if err := c2.(optim.Stateful).LoadState(clB); err == nil || !strings.Contains(err.Error(), "client 1") {
		t.Errorf("client 1's state into client 2: got %v", err)
	}
	var cs clientState
	if err := optim.DecodeState(clB, &cs); err != nil {
		t.Fatal(err)
	}
	bad := cs
	bad.Train.Perm = append([]int{0}, cs.Train.Perm...)
	badB, _ := optim.EncodeState(bad)
	if err := cl.(optim.Stateful).LoadState(badB); err == nil {
		t.Error("a minibatch order over another data size was loaded")
	}
	bad = cs
	bad.Val.Perm = append([]int(nil), cs.Val.Perm...)
	bad.Val.Perm[0] = len(bad.Val.Perm) // out of range: would index past the data
	badB, _ = optim.EncodeState(bad)
	if err := cl.(optim.Stateful).LoadState(badB); err == nil || !strings.Contains(err.Error(), "permutation") {
		t.Errorf("a minibatch order that is no permutation: got %v", err)
	}
	bad = cs
	bad.Train.RNG = cs.Train.RNG[:4]
	badB, _ = optim.EncodeState(bad)
	if err := cl.(optim.Stateful).LoadState(badB); err == nil {
		t.Error("a corrupt minibatch stream was loaded")
	}
	// A state refused halfway leaves the client as it was.
	bad = cs
	bad.Train.Pos = 4 // loads, then the validation stream fails
	bad.Val.RNG = nil
	badB, _ = optim.EncodeState(bad)
	if err := cl.(optim.Stateful).LoadState(badB); err == nil {
		t.Error("a corrupt validation minibatch stream was loaded")
	}
	if b := save(cl); !bytes.Equal(b, clB) {
		t.Error("a refused state changed the client")
	}
	// A server sample naming a client the run does not have.
	var ss serverState
	if err := optim.DecodeState(srvB, &ss); err != nil {
		t.Fatal(err)
	}
	ss.Chosen = []int{9}
	badB, _ = optim.EncodeState(ss)
	if err := srv.(optim.Stateful).LoadState(badB); err == nil || !strings.Contains(err.Error(), "client 9") {
		t.Errorf("a sample with client 9 of 4: got %v", err)
	}
	// A program further along than the run is long.
	var ps programState
	if err := optim.DecodeState(progB, &ps); err != nil {
		t.Fatal(err)
	}
	ps.Done = 5
	badB, _ = optim.EncodeState(ps)
	if err := prog.(optim.Stateful).LoadState(badB); err == nil || !strings.Contains(err.Error(), "outer iterations") {
		t.Errorf("a program state after 5 of 4 iterations: got %v", err)
	}
	// The parts still load their own states.
	for _, c := range []struct {
		to any
		b  []byte
	}{{srv, srvB}, {cl, clB}, {prog, progB}} {
		if err := c.to.(optim.Stateful).LoadState(c.b); err != nil {
			t.Errorf("%T: loading its own state: %v", c.to, err)
		}
	}
}
