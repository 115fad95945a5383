package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"hgpsim/scenarios"
)

// TestWorkerRefusesSupervisors: a supervisor without the worker's secret,
// or with another, is refused before any run starts (exit code 1, the
// worker named), the worker logs the refusal, and the right secret runs.
// A worker without a secret and without --insecure does not start.
func TestWorkerRefusesSupervisors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a worker process")
	}
	bin := buildBinary(t)
	var log syncBuffer
	cmd := exec.Command(bin, "worker", "--listen", "127.0.0.1:0", "--data-root", ".")
	cmd.Env = withSecret()
	cmd.Stderr = &log
	addr := listening(t, cmd)
	scenario := filepath.Join("run", "testdata", "golden", "faults.yaml")
	for _, c := range []struct{ name, secret, want string }{
		{"no secret", "", "no secret"},
		{"wrong secret", "another-secret-of-16+-bytes", "wrong secret"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		msg, code := runBinaryEnv(t, bin, withSecret(c.secret), "run", scenario, "--out", out, "--workers", addr)
		if code != 1 || !strings.Contains(msg, "worker "+addr+" refused this supervisor") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d, want 1 and a refusal naming the worker and %q: %s", c.name, code, c.want, msg)
		}
		if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
			t.Errorf("%s: a refused run wrote summary.json", c.name)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for !(strings.Contains(log.String(), "refused a connection from 127.0.0.1:") && strings.Contains(log.String(), ": wrong secret")) {
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not log the refusals; its log:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if msg, code := runBinary(t, bin, "run", scenario, "--out", filepath.Join(t.TempDir(), "ok"), "--workers", addr); code != 0 {
		t.Errorf("with the secret: exit %d: %s", code, msg)
	}

	if msg, code := runBinaryEnv(t, bin, withSecret(""), "worker", "--listen", "127.0.0.1:0", "--data-root", "."); code != 2 || !strings.Contains(msg, "no shared secret") {
		t.Errorf("worker without a secret: exit %d, want 2 naming the missing secret: %s", code, msg)
	}
	if msg, code := runBinaryEnv(t, bin, withSecret("short"), "worker", "--listen", "127.0.0.1:0", "--data-root", "."); code != 2 || !strings.Contains(msg, "at least 16") {
		t.Errorf("worker with a 5-byte secret: exit %d, want 2: %s", code, msg)
	}
	if msg, code := runBinary(t, bin, "worker", "--listen", "127.0.0.1:0"); code != 2 || !strings.Contains(msg, "--data-root") {
		t.Errorf("worker without --data-root: exit %d, want 2: %s", code, msg)
	}
}

// TestWorkerDataRoot: a scenario naming a data folder or a trace file
// outside the worker's data root fails the run, naming the path and the
// root; a path under the root is built.
func TestWorkerDataRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a worker process")
	}
	bin := buildBinary(t)
	root := t.TempDir()
	cmd := exec.Command(bin, "worker", "--listen", "127.0.0.1:0", "--data-root", root)
	cmd.Env = withSecret()
	addr := listening(t, cmd)
	// A links trace recorded outside the root, which the supervisor reads
	// and the worker must not.
	links := filepath.Join(t.TempDir(), "links.csv.gz")
	scenario := filepath.Join("run", "testdata", "golden", "failures.yaml")
	if msg, code := runBinary(t, bin, "run", scenario, "--out", filepath.Join(t.TempDir(), "rec"), "--record-links", links); code != 0 {
		t.Fatalf("recording: exit %d: %s", code, msg)
	}
	msg, code := runBinary(t, bin, "run", scenario, "--out", filepath.Join(t.TempDir(), "out"), "--replay-links", links, "--workers", addr)
	if code != 1 || !strings.Contains(msg, links+" is outside this worker's data root") {
		t.Errorf("trace file outside the root: exit %d, want 1 naming the path: %s", code, msg)
	}

	// The check itself, on the decoded scenarios a worker is sent.
	r, err := newDataRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(root, "idx")
	// An error names the path by the scenario's keys: a section's kind
	// and its parameters sit side by side.
	for _, c := range []struct {
		body string
		key  string // "": inside the root
	}{
		{"name: a\nclients: 4\ndata: {kind: fashion-mnist, dir: " + inside + "}\n", ""},
		{"name: a\nclients: 4\ndata: {kind: fashion-mnist, dir: " + inside + "/../../x}\n", "data.dir: "},
		{"name: a\nclients: 4\ndata: {kind: fashion-mnist}\n", "data.dir: "}, // the default folder
		{"name: a\nclients: 4\n", ""}, // synthetic data: no file
		{"name: a\nclients: 4\nnetwork: {kind: stochastic-directed, links: {kind: trace, file: /etc/passwd}}\n", "network.links.file: /etc/passwd is outside"},
	} {
		sc, err := scenarios.Decode("test", []byte(c.body))
		if err != nil {
			t.Fatalf("%q: %v", c.body, err)
		}
		err = r.check(sc)
		if (err == nil) != (c.key == "") || (err != nil && !strings.HasPrefix(err.Error(), c.key)) {
			t.Errorf("%q: check gave %v, want an error starting %q", c.body, err, c.key)
		}
	}
}

// syncBuffer is a bytes.Buffer safe to write from a process's copier and
// read from the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWorkerMutualTLS runs a scenario over a worker with mutual TLS: the
// same metrics as in process; a supervisor without a certificate, or
// without TLS, is refused.
func TestWorkerMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a worker process")
	}
	bin := buildBinary(t)
	cert, key, ca := testCertificate(t)
	tlsFlags := []string{"--tls-cert", cert, "--tls-key", key, "--tls-ca", ca, "--tls-mutual"}
	cmd := exec.Command(bin, append([]string{"worker", "--listen", "127.0.0.1:0", "--data-root", "."}, tlsFlags...)...)
	cmd.Env = withSecret()
	addr := listening(t, cmd)
	scenario := filepath.Join("run", "testdata", "golden", "faults.yaml")
	dir := t.TempDir()
	if msg, code := runBinary(t, bin, "run", scenario, "--out", filepath.Join(dir, "local")); code != 0 {
		t.Fatalf("in process: exit %d: %s", code, msg)
	}
	if msg, code := runBinary(t, bin, append([]string{"run", scenario, "--out", filepath.Join(dir, "tls"), "--workers", addr}, tlsFlags...)...); code != 0 {
		t.Fatalf("over mutual TLS: exit %d: %s", code, msg)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "local", "metrics.jsonl"))
	got, _ := os.ReadFile(filepath.Join(dir, "tls", "metrics.jsonl"))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Errorf("metrics.jsonl over mutual TLS differs from the in-process run (%d vs %d bytes)", len(got), len(want))
	}
	if msg, code := runBinary(t, bin, "run", scenario, "--out", filepath.Join(dir, "plain"), "--workers", addr); code != 1 || !strings.Contains(msg, "TLS") {
		t.Errorf("plain supervisor against a TLS worker: exit %d, want 1 naming TLS: %s", code, msg)
	}
}

// testCertificate writes a self-signed CA-capable certificate for
// 127.0.0.1 and its key, used by both sides, and returns the files
// (certificate, key, CA = the certificate).
func testCertificate(t *testing.T) (cert, key, ca string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hgpsim test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key, cert
}
