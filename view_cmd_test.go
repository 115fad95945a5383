package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hgpsim/view"
)

func TestViewArguments(t *testing.T) {
	f := write(t, "s.yaml", "name: s\nclients: 4\nsgp:\n  rounds: 10\n  eval_every: 5\nruntime:\n  driver: sequential\n")
	dir := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	if code := runCLI([]string{"run", f, "--out", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"view"}, "exactly one"},
		{[]string{"view", filepath.Join(dir, "nothing")}, "not a folder"},
		{[]string{"view", t.TempDir()}, "neither a run folder"},
		{[]string{"view", dir, "--listen", "0.0.0.0:0"}, "--token"},
		{[]string{"view", dir, "--listen", "192.0.2.1:0"}, "--token"},
		{[]string{"view", dir, "--listen", "nonsense"}, "--listen"},
	} {
		stderr.Reset()
		if code := runCLI(c.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr.String(), c.msg)
		}
	}
	html := filepath.Join(t.TempDir(), "page.html")
	stdout.Reset()
	if code := runCLI([]string{"view", dir, "--html", html}, &stdout, &stderr); code != 0 {
		t.Fatalf("--html: exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(html)
	if err != nil || !bytes.Contains(b, []byte("window.HGPSIM_DATA = ")) {
		t.Fatalf("--html wrote %d bytes (%v) without its data inlined", len(b), err)
	}
	for _, ref := range []string{`src="http`, `href="http`, `url(http`, "fetch('http"} {
		if bytes.Contains(b, []byte(ref)) {
			t.Errorf("the page refers to the network: %s", ref)
		}
	}
	for host, want := range map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true, "127.0.0.2": true,
		"0.0.0.0": false, "": false, "192.0.2.1": false, "example.org": false} {
		if loopback(host) != want {
			t.Errorf("loopback(%q) = %v", host, !want)
		}
	}
}

// cmdView serves until its context ends; with a token the printed
// address carries it and requests without it are refused.
func TestViewServes(t *testing.T) {
	f := write(t, "s.yaml", "name: s\nclients: 4\nsgp:\n  rounds: 10\n  eval_every: 5\nruntime:\n  driver: sequential\n")
	dir := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	if code := runCLI([]string{"run", f, "--out", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- cmdView(ctx, dir, viewFlags{listen: "127.0.0.1:0", token: "t0k"}, out, &stderr)
	}()
	var addr string
	for start := time.Now(); addr == "" && time.Since(start) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
		addr = strings.TrimSpace(out.String())
	}
	if !strings.HasSuffix(addr, "/?token=t0k") {
		t.Fatalf("printed %q, want the address with the token", addr)
	}
	base := strings.TrimSuffix(addr, "?token=t0k")
	for _, c := range []struct {
		url  string
		code int
	}{{base + "api/info?token=t0k", 200}, {base + "api/info", 401}, {base + "?token=t0k", 200}} {
		r, err := http.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != c.code {
			t.Errorf("%s: status %d, want %d", c.url, r.StatusCode, c.code)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stopping: %v", err)
	}
}

type lockedBuffer struct {
	mu chan struct{}
	b  bytes.Buffer
}

func (l *lockedBuffer) lock() {
	if l.mu == nil {
		l.mu = make(chan struct{}, 1)
	}
	l.mu <- struct{}{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.lock()
	defer func() { <-l.mu }()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.lock()
	defer func() { <-l.mu }()
	return l.b.String()
}

// The page of a sweep that runs shows its progress advance: the runs done
// go from none to all, through the values between.
func TestViewSweepProgress(t *testing.T) {
	f := write(t, "s.yaml", "name: s\nclients: 6\nsgp:\n  rounds: 300\n  eval_every: 100\nruntime:\n  driver: sequential\n")
	dir := filepath.Join(t.TempDir(), "sweep")
	done := make(chan int, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		done <- runCLI([]string{"sweep", f, "--seeds", "1-4", "--jobs", "1", "--out", dir}, &stdout, &stderr)
	}()
	seen := map[int]bool{}
	var srv *view.Server
	defer func() {
		if srv != nil {
			srv.Close()
		}
	}()
	for finished := false; !finished; {
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("sweep: exit %d", code)
			}
			finished = true
		case <-time.After(2 * time.Millisecond):
		}
		if srv == nil {
			if _, err := os.Stat(filepath.Join(dir, "sweep.json")); err != nil {
				continue
			}
			var err error
			if srv, err = view.New(dir, ""); err != nil {
				t.Fatal(err)
			}
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/api/sweep", nil))
		var sw view.Sweep
		if err := json.Unmarshal(rec.Body.Bytes(), &sw); rec.Code != 200 || err != nil {
			t.Fatalf("/api/sweep: status %d, %v: %s", rec.Code, err, rec.Body.String())
		}
		if sw.Total != 4 {
			t.Fatalf("total %d, want 4", sw.Total)
		}
		seen[sw.Done] = true
	}
	between := seen[1] || seen[2] || seen[3]
	if !seen[4] || !between {
		t.Errorf("runs done seen: %v; want all 4 at the end and some number between while the sweep ran", seen)
	}
}
