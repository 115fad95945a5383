package actors

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"hgpsim/graph"
	"hgpsim/optim"
	"hgpsim/optim/pdbo"
	"hgpsim/wire"
)

// The tests with workers run each worker in a process of its own — this
// test binary started again with workerEnv set — as hgpsim does: a process
// hosts one proto.actor remote (see supervisorHost).
const workerEnv = "HGPSIM_ACTORS_TEST_WORKER"

// Worker processes build n SGP clients on the test network, as every
// worker of a real run builds the same clients from the same scenario; the
// "scenario" is a mode: "fail" fails building, panic, hang or slow make
// client 3 misbehave in round 5 (see faulty), anything else is plain SGP.
const (
	testKind = "stochastic-directed"
	testN    = 10
)

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(serveTestWorker())
	}
	os.Exit(m.Run())
}

// serveTestWorker runs a worker until its stdin closes.
func serveTestWorker() int {
	build := func(scenario []byte, _ []int64) (*graph.Network, optim.ClientFactory, error) {
		mode := string(scenario)
		switch mode {
		case "fail":
			return nil, nil, errors.New("no data here")
		case "build-panic":
			panic("cannot read the data")
		case "build-hang":
			time.Sleep(1500 * time.Millisecond) // hung at 10 × 100 ms
		}
		var t testing.T // network and sgpClients fail through t only on bad constants
		_, bs := sgpClients(&t, testN, pdbo.AfterComm)
		if mode == "panic" || mode == "hang" || mode == "slow" { // a faulty client 3
			bs[3] = &faulty{Behaviour: bs[3], round: 5, mode: mode}
		}
		factory, _ := optim.FixedClients(bs)
		return network(&t, testKind, testN), factory, nil
	}
	w, err := StartWorker("127.0.0.1:0", build, WorkerOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Close()
	fmt.Println(w.Address())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startWorkers starts k worker processes and returns them with their
// addresses; they end with the test.
func startWorkers(t *testing.T, k int) ([]*exec.Cmd, []string) {
	t.Helper()
	cmds := make([]*exec.Cmd, k)
	addrs := make([]string, k)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"=1")
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// Closing stdin ends the worker; one stuck in a hung client
			// call (the "hang" mode sleeps 5 s) is killed after a second.
			stdin.Close()
			var err error
			done := make(chan struct{})
			go func() { err = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			// A worker that ended by itself with an error code failed
			// inside (under -race, a data race exits with 66); one killed
			// by a signal was killed here.
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
				t.Errorf("worker %d exited with %v", i, err)
			}
		})
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
		cmds[i], addrs[i] = cmd, strings.TrimSpace(line)
	}
	return cmds, addrs
}

// TestWorkersMatchInProcess runs the same SGP phases in one process and
// with the clients on one, two and three workers (in this process, over
// proto.actor remote on loopback, under the race detector in CI): events,
// stats and traffic must be bit-identical.
func TestWorkersMatchInProcess(t *testing.T) {
	const n = testN
	nw := network(t, testKind, n)
	_, bs := sgpClients(t, n, pdbo.AfterComm)
	var want recorder
	rt := newRuntime(t, nw, bs, Options{RoundTimeout: 10 * time.Second})
	wantTr, err := rt.Execute(context.Background(), sgpPhases(2, 12, 5), &want)
	if err != nil {
		t.Fatal(err)
	}
	_, all := startWorkers(t, 3) // a worker hosts one run after another
	for k := 1; k <= 3; k++ {
		rt, err := New(nw, nil, Options{RoundTimeout: 10 * time.Second, Workers: all[:k], Scenario: []byte("test")})
		if err != nil {
			t.Fatalf("%d workers: %v", k, err)
		}
		var got recorder
		tr, err := rt.Execute(context.Background(), sgpPhases(2, 12, 5), &got)
		wt := rt.Wire()
		rt.Close()
		if err != nil {
			t.Fatalf("%d workers: %v", k, err)
		}
		if tr != wantTr {
			t.Errorf("%d workers: traffic %+v, in process %+v", k, tr, wantTr)
		}
		if wt == nil || wt.Steps != int64(k)*wt.Rounds || wt.Acks != int64(n)*wt.Rounds || wt.StepBytes == 0 || wt.AckBytes == 0 {
			t.Errorf("%d workers: wire traffic %+v", k, wt)
		}
		if len(got.events) != len(want.events) {
			t.Fatalf("%d workers: %d events, in process %d", k, len(got.events), len(want.events))
		}
		for e := range want.events {
			a, b := want.events[e], got.events[e]
			if a.Round != b.Round || a.Traffic != b.Traffic {
				t.Fatalf("%d workers, event %d: %d/%+v vs %d/%+v", k, e, a.Round, a.Traffic, b.Round, b.Traffic)
			}
			for i := range a.Clients {
				sa, sb := a.Clients[i], b.Clients[i]
				if !sameBits(sa.X, sb.X) || math.Float64bits(sa.TrainLoss) != math.Float64bits(sb.TrainLoss) ||
					math.Float64bits(sa.Weight) != math.Float64bits(sb.Weight) || sa.TrainN != sb.TrainN {
					t.Fatalf("%d workers, event %d, client %d: stats differ", k, e, i)
				}
			}
		}
		for p := range want.reports {
			a, b := want.reports[p].Delivered, got.reports[p].Delivered
			for i := range a.Count {
				if !sameBits(a.Count[i], b.Count[i]) || !sameBits(a.WeightSum[i], b.WeightSum[i]) {
					t.Fatalf("%d workers, phase %d: delivery records differ for sender %d", k, p, i)
				}
			}
		}
	}
}

// closer is a sink that kills a worker after a few evaluations.
type closer struct {
	recorder
	once  sync.Once
	after int
	close func()
}

func (c *closer) Evaluated(ev *optim.RoundEvent) error {
	if len(c.events) == c.after {
		c.once.Do(c.close)
	}
	return c.recorder.Evaluated(ev)
}

// TestWorkerLostFailsTheRun kills one of two worker processes mid-run: the
// run fails, well within round_timeout, naming the worker and its clients.
func TestWorkerLostFailsTheRun(t *testing.T) {
	nw := network(t, testKind, testN)
	ws, addrs := startWorkers(t, 2)
	const timeout = 5 * time.Second
	rt, err := New(nw, nil, Options{RoundTimeout: timeout, Workers: addrs, Scenario: []byte("test")})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var lost time.Time
	sink := &closer{after: 3, close: func() { lost = time.Now(); _ = ws[1].Process.Kill() }}
	_, err = rt.Execute(context.Background(), sgpPhases(1, 1_000_000, 10), sink)
	if err == nil {
		t.Fatal("the run survived a lost worker")
	}
	if d := time.Since(lost); d > timeout {
		t.Errorf("failed %v after the worker was lost, round_timeout %v", d, timeout)
	}
	want := "worker " + addrs[1] + " (clients 5–9)"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
	// The runtime stays failed.
	if _, err := rt.Execute(context.Background(), sgpPhases(1, 2, 1), &recorder{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a run after the loss: %v", err)
	}
}

// TestWorkerSetupErrors: an unreachable worker and a worker that cannot
// build its clients fail New with errors that name them.
func TestWorkerSetupErrors(t *testing.T) {
	nw := network(t, testKind, testN)
	// A port nothing listens on: a worker that was killed.
	ws, addrs := startWorkers(t, 1)
	_ = ws[0].Process.Kill()
	_ = ws[0].Wait()
	if _, err := New(nw, nil, Options{RoundTimeout: time.Second, Workers: addrs}); err == nil || !strings.Contains(err.Error(), addrs[0]) {
		t.Errorf("unreachable worker: %v", err)
	}
	// A worker hosts one run at a time: a second supervisor is refused
	// while the first holds it, and gets it once the first is closed.
	_, addrs = startWorkers(t, 1)
	first, err := New(nw, nil, Options{RoundTimeout: 5 * time.Second, Workers: addrs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(nw, nil, Options{RoundTimeout: 5 * time.Second, Workers: addrs}); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Errorf("a second supervisor on a busy worker: %v", err)
	}
	first.Close()
	second, err := New(nw, nil, Options{RoundTimeout: 5 * time.Second, Workers: addrs})
	if err != nil {
		t.Fatalf("after the first run released the worker: %v", err)
	}
	second.Close()
	// Any address that reaches the worker will do, not only the one it
	// printed: localhost for 127.0.0.1.
	alias := []string{strings.Replace(addrs[0], "127.0.0.1", "localhost", 1)}
	third, err := New(nw, nil, Options{RoundTimeout: 5 * time.Second, Workers: alias})
	if err != nil {
		t.Fatalf("the worker reached as %s: %v", alias[0], err)
	}
	if _, err := third.Execute(context.Background(), sgpPhases(1, 3, 1), &recorder{}); err != nil {
		t.Errorf("a run on the worker reached as %s: %v", alias[0], err)
	}
	third.Close()

	// The same worker, free again, cannot build this run.
	_, err = New(nw, nil, Options{RoundTimeout: 5 * time.Second, Workers: addrs, Scenario: []byte("fail")})
	if err == nil || !strings.Contains(err.Error(), "no data here") || !strings.Contains(err.Error(), "worker 127.0.0.1:") {
		t.Errorf("a worker that cannot build: %v", err)
	}
	_, err = New(nw, nil, Options{RoundTimeout: 5 * time.Second, Workers: addrs, Scenario: []byte("build-panic")})
	if err == nil || !strings.Contains(err.Error(), "cannot read the data") {
		t.Errorf("a worker whose build panics: %v", err)
	}
	// A build that hangs (10 × round_timeout) fails the setup too; slow
	// builds do not, since the worker beats while it builds.
	_, err = New(nw, nil, Options{RoundTimeout: 100 * time.Millisecond, Workers: addrs, Scenario: []byte("build-hang")})
	if err == nil || !strings.Contains(err.Error(), "has been building the run") {
		t.Errorf("a worker whose build hangs: %v", err)
	}
	if _, err := StartWorker("127.0.0.1:99999", nil, WorkerOptions{}); err == nil {
		t.Error("a port out of range was accepted")
	}
	if _, err := StartWorker("no-port", nil, WorkerOptions{}); err == nil {
		t.Error("an address without a port was accepted")
	}
}

// TestRemoteClientFailures: a behaviour's panic and a hung call on a worker
// fail the run naming the client, the round and the worker; a slow call
// (longer than round_timeout, shorter than 10×) does not.
func TestRemoteClientFailures(t *testing.T) {
	nw := network(t, testKind, testN)
	_, addrs := startWorkers(t, 2) // hang last: its client stays asleep for 5 s
	for _, mode := range []string{"panic", "slow", "hang"} {
		t.Run(mode, func(t *testing.T) {
			timeout := 300 * time.Millisecond // the slow call takes 1 s
			if mode == "hang" {
				timeout = 200 * time.Millisecond // hung after 2 s, long before its 5 s end
			}
			rt, err := New(nw, nil, Options{RoundTimeout: timeout, Workers: addrs, Scenario: []byte(mode)})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			_, err = rt.Execute(context.Background(), &optim.Phases{{Name: "sgp", Rounds: 10}}, optim.NoSink{})
			if mode == "slow" {
				if err != nil {
					t.Fatalf("a slow but progressing run failed: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("run succeeded despite a failing client")
			}
			msg := err.Error()
			worker := "worker " + addrs[0] + " (clients 0–4)"
			switch mode {
			case "panic":
				var ce *optim.ClientError
				if !errors.As(err, &ce) || ce.Client != 3 || ce.Round != 5 || !strings.Contains(msg, worker) || !strings.Contains(msg, "boom") {
					t.Errorf("want client 3, round 5, %s and the panic, got %v", worker, err)
				}
			case "hang":
				if !strings.Contains(msg, worker) || !strings.Contains(msg, "client 3 has been inside one call") || !strings.Contains(msg, "round 5") {
					t.Errorf("want %s, client 3 hung in round 5, got %v", worker, err)
				}
			}
		})
	}
}

// TestWorkerRefusesAnotherBuild: a worker of another build answers a Setup
// with an error naming both builds (the host actor, in one process).
func TestWorkerRefusesAnotherBuild(t *testing.T) {
	system := actor.NewActorSystem()
	defer system.Shutdown()
	got := make(chan *wire.Hosted, 1)
	probe := system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if h, ok := ctx.Message().(*wire.Hosted); ok {
			got <- h
		}
	}))
	pool := newWorkers()
	defer pool.close()
	built := false
	h := &workerHost{pool: pool, self: "worker", version: "build a", build: func([]byte, []int64) (*graph.Network, optim.ClientFactory, error) {
		built = true
		return nil, nil, errors.New("not reached")
	}}
	host := system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return h }))
	system.Root.Send(host, &wire.Setup{Clients: []int64{0}, SupervisorAddress: probe.Address, SupervisorId: probe.Id, Run: 7, Build: "build b", Worker: "w:1"})
	select {
	case m := <-got:
		if m.Run != 7 || m.Worker != "w:1" || !strings.Contains(m.Error, `"build a"`) || !strings.Contains(m.Error, `"build b"`) {
			t.Errorf("hosted: %v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer to the setup")
	}
	_ = system.Root.StopFuture(host).Wait()
	if built {
		t.Error("a worker of another build built the run")
	}
}
