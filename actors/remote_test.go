package actors

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
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

// securityEnv gives a test process its Security: the secret, certificate,
// key and CA files, one a line. supervisorEnv makes the test binary a
// supervisor of the workers it lists (comma-separated) instead: a process
// supervises with one Security, and the tests' own supervisor has none.
const (
	securityEnv   = "HGPSIM_ACTORS_TEST_SECURITY"
	supervisorEnv = "HGPSIM_ACTORS_TEST_SUPERVISOR"
)

func testSecurity() Security {
	f := strings.Split(os.Getenv(securityEnv), "\n")
	if len(f) != 4 {
		return Security{}
	}
	return Security{Secret: []byte(f[0]), CertFile: f[1], KeyFile: f[2], CAFile: f[3], Mutual: true}
}

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
	if a := os.Getenv(supervisorEnv); a != "" {
		os.Exit(superviseTestRun(strings.Split(a, ",")))
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
		if mode == "pushsum32" {
			_, bs := pushSum32Clients(testN, pushSum32D)
			factory, _ := optim.FixedClients(bs)
			return network(&t, testKind, testN), factory, nil
		}
		_, bs := sgpClients(&t, testN, pdbo.AfterComm)
		if mode == "wide" { // a model 100 times the size
			_, bs = sgpClientsOf(&t, testN, 600, pdbo.AfterComm)
		}
		nw := network(&t, testKind, testN)
		if mode == "delay" {
			nw.Failures = append(nw.Failures, testDelay)
		}
		if mode == "panic" || mode == "hang" || mode == "slow" { // a faulty client 3
			// A worker's hung client sleeps past the test (the worker is
			// killed at its end), so detection never races its waking.
			bs[3] = &faulty{Behaviour: bs[3], round: 5, mode: mode, hang: time.Minute}
		}
		factory, _ := optim.FixedClients(bs)
		return nw, factory, nil
	}
	w, err := StartWorker("127.0.0.1:0", build, WorkerOptions{Security: testSecurity()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer w.Close()
	fmt.Println(w.Address())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// superviseTestRun runs SGP rounds in one process and over the workers
// at addrs, with testSecurity, and reports on stderr and in its exit code
// whether the states differ.
func superviseTestRun(addrs []string) int {
	var t testing.T
	nw := network(&t, testKind, testN)
	_, bs := sgpClients(&t, testN, pdbo.AfterComm)
	factory, _ := optim.FixedClients(bs)
	var want, got recorder
	local, err := New(nw, factory, Options{})
	if err == nil {
		_, err = local.Execute(context.Background(), sgpPhases(1, 12, 4), &want)
		local.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "in process:", err)
		return 1
	}
	rt, err := New(nw, nil, Options{RoundTimeout: 10 * time.Second, Workers: addrs, Scenario: []byte("test"), Security: testSecurity()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer rt.Close()
	if _, err := rt.Execute(context.Background(), sgpPhases(1, 12, 4), &got); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if w := rt.Wire(); w == nil || w.PeerBytes == 0 {
		fmt.Fprintf(os.Stderr, "no payloads between the workers: %+v\n", w)
		return 1
	}
	if len(got.events) != len(want.events) {
		fmt.Fprintf(os.Stderr, "%d events, in process %d\n", len(got.events), len(want.events))
		return 1
	}
	for e := range want.events {
		if err := sameEvaluation(&want.events[e], &got.events[e]); err != nil {
			fmt.Fprintf(os.Stderr, "event %d: %v\n", e, err)
			return 1
		}
	}
	return 0
}

// sameEvaluation checks that an evaluation over workers has the bits of
// the same one in process: every client's stats, and the consensus
// distance, which depends on every coordinate of every client's
// parameters (the supervisor over workers receives none of them).
func sameEvaluation(want, got *optim.RoundEvent) error {
	if len(want.Clients) != len(got.Clients) {
		return fmt.Errorf("%d clients, in process %d", len(got.Clients), len(want.Clients))
	}
	for i := range want.Clients {
		a, b := want.Clients[i], got.Clients[i]
		if b.X != nil || b.X32 != nil {
			return fmt.Errorf("client %d: %d parameters reached the supervisor", i, len(b.X)+len(b.X32))
		}
		a.X, a.X32 = nil, nil
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("client %d: stats %+v, in process %+v", i, b, a)
		}
	}
	ga, gb := want.Summarize(), got.Summarize()
	if want.Consensus != nil || got.Consensus == nil || ga.XClients != gb.XClients || ga.XClients == 0 ||
		math.Float64bits(ga.Consensus) != math.Float64bits(gb.Consensus) {
		return fmt.Errorf("consensus %v over %d clients, in process %v over %d", gb.Consensus, gb.XClients, ga.Consensus, ga.XClients)
	}
	return nil
}

// startWorkers starts k worker processes, with env added to their
// environment, and returns them with their addresses; they end with the
// test.
func startWorkers(t *testing.T, k int, env ...string) ([]*exec.Cmd, []string) {
	t.Helper()
	cmds := make([]*exec.Cmd, k)
	addrs := make([]string, k)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(append(os.Environ(), workerEnv+"=1"), env...)
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
		if wt == nil || wt.Steps != int64(k)*wt.Rounds || wt.Acks != int64(k)*wt.Rounds || wt.StepBytes == 0 || wt.AckBytes == 0 ||
			(k > 1) != (wt.PeerBytes > 0) || len(wt.PeerBytesSent) != k {
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
			if err := sameEvaluation(&a, &b); err != nil {
				t.Fatalf("%d workers, event %d: %v", k, e, err)
			}
		}
		for p := range want.reports {
			if ca, cb := want.reports[p].last.Consensus, got.reports[p].last.Consensus; math.Float64bits(ca) != math.Float64bits(cb) {
				t.Fatalf("%d workers, phase %d: the last evaluation's consensus %v, in process %v", k, p, cb, ca)
			}
			a, b := want.reports[p].Delivered, got.reports[p].Delivered
			for i := range a.Count {
				if !sameBits(a.Count[i], b.Count[i]) || !sameBits(a.WeightSum[i], b.WeightSum[i]) {
					t.Fatalf("%d workers, phase %d: delivery records differ for sender %d", k, p, i)
				}
			}
		}
	}
}

// TestSupervisorBytesDoNotDependOnD runs the same rounds over two workers
// with a model of d = 21 and one of d = 1803: the payloads cross between
// the workers (their bytes grow with d), while what the supervisor sends
// and receives, but for the results it reports, stays the same but for
// the varints of the byte counts it is told; and so do the bytes that
// evaluations add, though every client reports a parameter vector to the
// consensus distance.
func TestSupervisorBytesDoNotDependOnD(t *testing.T) {
	nw := network(t, testKind, testN)
	_, addrs := startWorkers(t, 2)
	measure := func(mode string, eval int) *WireTraffic {
		rt, err := New(nw, nil, Options{RoundTimeout: 10 * time.Second, Workers: addrs, Scenario: []byte(mode)})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		if _, err := rt.Execute(context.Background(), sgpPhases(1, 30, eval), &recorder{}); err != nil {
			t.Fatal(err)
		}
		return rt.Wire()
	}
	small, wide := measure("test", 0), measure("wide", 0)
	control := func(w *WireTraffic) float64 { return float64(w.StepBytes + w.AckBytes - w.ReportBytes) }
	t.Logf("d = 21: %+v", small)
	t.Logf("d = 1803: %+v", wide)
	if small.Rounds != wide.Rounds || small.Rounds != 31 {
		t.Fatalf("rounds %d and %d, want 31", small.Rounds, wide.Rounds)
	}
	// Two counts in each ack grow with d — the bytes a worker filed and the
	// bytes it sent to its peers — by a factor below 2⁷, so their varints by
	// at most one byte each.
	if a, b := control(small), control(wide); math.Abs(a-b) > float64(2*wide.Acks) {
		t.Errorf("supervisor bytes without reports: %v at d = 21, %v at d = 1803", a, b)
	}
	if r := float64(wide.PeerBytes) / float64(small.PeerBytes); r < 20 {
		t.Errorf("peer bytes grew %.1f times with d 86 times as large: the payloads do not go worker to worker", r)
	}
	// Five more evaluations (every 5 rounds, and the last): what they add
	// to the supervisor's bytes does not grow with d. (The varints of the
	// peer bytes, which now count the vectors sent to worker 0, may take
	// a byte more in each ack.)
	smallEval, wideEval := measure("test", 5), measure("wide", 5)
	all := func(w *WireTraffic) float64 { return float64(w.StepBytes + w.AckBytes) }
	added := func(with, without *WireTraffic) float64 { return all(with) - all(without) }
	a, b := added(smallEval, small), added(wideEval, wide)
	t.Logf("5 evaluations add %v bytes at d = 21, %v at d = 1803", a, b)
	if a <= 0 || math.Abs(a-b) > float64(2*wide.Acks) {
		t.Errorf("5 evaluations add %v supervisor bytes at d = 21, %v at d = 1803: the stats carry each client's parameters", a, b)
	}
}

// TestWorkersTalkOverTLS runs a supervisor and two workers with a shared
// secret and mutual TLS: the workers send each other their payloads over
// the same transport, or the run would fail (a TLS server refuses a plain
// connection, and a connection refused fails the run).
func TestWorkersTalkOverTLS(t *testing.T) {
	cert, key := testCertificate(t)
	sec := securityEnv + "=" + strings.Join([]string{"a shared secret of the test", cert, key, cert}, "\n")
	_, addrs := startWorkers(t, 2, sec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), supervisorEnv+"="+strings.Join(addrs, ","), sec)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the supervisor: %v: %s", err, out)
	}

	// Two workers that do not trust each other's certificates, both
	// trusted by the supervisor: the setup fails at once, naming the
	// connection between them, instead of the run waiting for batches
	// that never come.
	other, otherKey := testCertificate(t)
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, append(must(os.ReadFile(cert)), must(os.ReadFile(other))...), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := "a shared secret of the test"
	_, a1 := startWorkers(t, 1, securityEnv+"="+strings.Join([]string{secret, cert, key, cert}, "\n"))
	_, a2 := startWorkers(t, 1, securityEnv+"="+strings.Join([]string{secret, other, otherKey, bundle}, "\n"))
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), supervisorEnv+"="+a1[0]+","+a2[0], securityEnv+"="+strings.Join([]string{secret, cert, key, bundle}, "\n"))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	// Either worker may be the first to say so.
	w1, w2 := "worker "+a1[0]+" (clients 0–4)", "worker "+a2[0]+" (clients 5–9)"
	if err == nil || !(strings.Contains(string(out), w1+": cannot reach "+w2) || strings.Contains(string(out), w2+": cannot reach "+w1)) || !strings.Contains(string(out), "TLS") {
		t.Fatalf("workers that refuse each other: %v: %s", err, out)
	}
	t.Logf("failed after %v: %s", time.Since(start).Round(time.Millisecond), out)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// testCertificate writes a key and a self-signed certificate for
// 127.0.0.1 that is its own CA, for both ends of every connection.
func testCertificate(t *testing.T) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "actors test"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IsCA:        true, BasicConstraintsValid: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	for f, b := range map[string]*pem.Block{cert: {Type: "CERTIFICATE", Bytes: der}, key: {Type: "PRIVATE KEY", Bytes: kder}} {
		if err := os.WriteFile(f, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cert, key
}

// A worker that has waited round_timeout for another's batch reports it
// in its heartbeats; the supervisor then fails the run naming both.
func TestLostBatchNamesBothWorkers(t *testing.T) {
	r := newRemoteRun([]string{"a:1", "b:2", "c:3"}, 9, nil)
	w := r.workers[2]
	w.waiting, w.waitingFor = 1900*time.Millisecond, []int64{0}
	if err := r.lostBatch(w, 2*time.Second); err != nil {
		t.Fatalf("a wait shorter than round_timeout: %v", err)
	}
	w.waiting = 2100 * time.Millisecond
	err := r.lostBatch(w, 2*time.Second)
	if want := "worker c:3 (clients 6–8): no batch (or parameters) from worker a:1 (clients 0–2) for 2.1s"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// testDelay delays messages on the network of the "delay" workers.
var testDelay = &graph.Delay{Prob: 0.4, Min: 1, Max: 3}

// parts is a program of the parts of one phase, each continuing the
// delivery record of the one before, as pdbo's cut SGP phases do.
type parts struct {
	specs []optim.PhaseSpec
	next  int
}

func (p *parts) Next(done *optim.PhaseReport) (*optim.PhaseSpec, error) {
	if p.next == len(p.specs) {
		return nil, nil
	}
	spec := p.specs[p.next]
	p.next++
	if done != nil && done.Spec.Continued {
		spec.Delivered = done.Delivered
	}
	return &spec, nil
}

// TestWorkersKeepLateMessages runs a phase cut in three parts on a network
// that delays messages, in one process and over two workers: the workers
// keep the late messages from one part to the next and report them after
// each part in the order one router holds them (what a checkpoint saves),
// and a part resumed with late messages (as from a checkpoint) gives the
// same rounds in one process and on workers, which receive them with
// step 0.
func TestWorkersKeepLateMessages(t *testing.T) {
	nw := network(t, testKind, testN)
	nw.Failures = append(nw.Failures, testDelay)
	specs := optim.SplitPhase(optim.PhaseSpec{Name: "sgp", Rounds: 24, EvalEvery: 4, Tick: optim.Continue, Track: true}, 8)
	if len(specs) != 3 {
		t.Fatalf("%d parts", len(specs))
	}
	_, addrs := startWorkers(t, 2)
	run := func(remote bool, prog optim.Program) *recorder {
		t.Helper()
		var rt *Runtime
		if remote {
			var err error
			if rt, err = New(nw, nil, Options{RoundTimeout: 10 * time.Second, Workers: addrs, Scenario: []byte("delay")}); err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
		} else {
			_, bs := sgpClients(t, testN, pdbo.AfterComm)
			rt = newRuntime(t, nw, bs, Options{RoundTimeout: 10 * time.Second}) // closed by the test
		}
		var rec recorder
		if _, err := rt.Execute(context.Background(), prog, &rec); err != nil {
			t.Fatal(err)
		}
		return &rec
	}
	sameRuns := func(what string, want, got *recorder) {
		t.Helper()
		if len(got.events) != len(want.events) || len(got.reports) != len(want.reports) {
			t.Fatalf("%s: %d events and %d reports, want %d and %d", what, len(got.events), len(got.reports), len(want.events), len(want.reports))
		}
		for e := range want.events {
			a, b := want.events[e], got.events[e]
			if a.Round != b.Round || a.Traffic != b.Traffic {
				t.Fatalf("%s, event %d: round %d, %+v; want %d, %+v", what, e, b.Round, b.Traffic, a.Round, a.Traffic)
			}
			if err := sameEvaluation(&a, &b); err != nil {
				t.Fatalf("%s, event %d: %v", what, e, err)
			}
		}
		for p := range want.reports {
			a, b := want.reports[p], got.reports[p]
			if a.Traffic != b.Traffic || len(a.Late) != len(b.Late) {
				t.Fatalf("%s, part %d: traffic %+v and %d late messages, want %+v and %d", what, p, b.Traffic, len(b.Late), a.Traffic, len(a.Late))
			}
			for k := range a.Late {
				x, y := a.Late[k], b.Late[k]
				if x.Due != y.Due || x.To != y.To || x.Pushed != y.Pushed || x.Msg.From != y.Msg.From || x.Msg.Round != y.Msg.Round ||
					math.Float64bits(x.Msg.Weight) != math.Float64bits(y.Msg.Weight) || !sameBits(x.Msg.Vec, y.Msg.Vec) {
					t.Fatalf("%s, part %d, late message %d: %+v, want %+v", what, p, k, y, x)
				}
			}
		}
	}
	want := run(false, &parts{specs: specs})
	late := 0
	for _, r := range want.reports[:2] {
		late += len(r.Late)
	}
	if late == 0 {
		t.Fatal("no late message between the parts: the test tests nothing")
	}
	sameRuns("whole phase", want, run(true, &parts{specs: specs}))
	last := want.reports[2].Delivered
	got := run(true, &parts{specs: specs}).reports[2].Delivered
	for i := range last.Count {
		if !sameBits(last.Count[i], got.Count[i]) || !sameBits(last.WeightSum[i], got.WeightSum[i]) || !sameBits(last.Online, got.Online) {
			t.Fatalf("the delivery records differ for sender %d", i)
		}
	}

	resumed := func() *parts {
		p := &parts{specs: append([]optim.PhaseSpec(nil), specs[1:]...)}
		p.specs[0].Late = want.reports[0].Late
		p.specs[0].Track = false
		p.specs[1].Track = false
		return p
	}
	sameRuns("resumed part", run(false, resumed()), run(true, resumed()))
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
				// Hung after 10 × 500 ms. The other worker, idle meanwhile,
				// must be heard from every 500 ms: at 200 ms a loaded
				// machine (load 7 on 2 cores) once delayed its heartbeat
				// 226 ms and the run blamed it instead.
				timeout = 500 * time.Millisecond
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
