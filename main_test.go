package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	good := write(t, "good.yaml", "name: cli\nclients: 4\nsgp:\n  rounds: 5\n  eval_every: 0\n")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"validate ok", []string{"validate", good}, 0, ""},
		{"run ok", []string{"run", good, "--out", filepath.Join(t.TempDir(), "out"), "--seed", "9"}, 0, ""},
		{"unknown key", []string{"validate", write(t, "k.yaml", "clients: 4\nfoo: 1\n")}, 2, `unknown key "foo"`},
		{"malformed", []string{"run", write(t, "m.yaml", "clients: [4\n")}, 2, "line"},
		{"delta outside", []string{"run", write(t, "d.yaml", "network:\n  delta_min: 1.2\n")}, 2, "delta_min"},
		{"one client", []string{"validate", write(t, "n.yaml", "clients: 1\n")}, 2, "clients: must be in [2, 10000], got 1"},
		{"disconnected", []string{"validate", write(t, "g.yaml", "clients: 3\nnetwork:\n  kind: edge-list\n  symmetric: true\n  edges: [{from: 0, to: 1, prob: 1}]\n")}, 2, "strongly connected"},
		{"missing file", []string{"run", "/nonexistent/x.yaml"}, 2, "no such file"},
		{"no command", nil, 2, "no command"},
		{"unknown command", []string{"fly"}, 2, "unknown command"},
		{"bad flag", []string{"run", good, "--speed", "3"}, 2, "flag provided but not defined"},
		{"bad seed", []string{"run", good, "--seed", "-3"}, 2, "--seed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(c.args, &out, &errb)
			if code != c.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, c.code, errb.String())
			}
			if c.msg != "" {
				first := strings.SplitN(errb.String(), "\n", 2)[0]
				if !strings.Contains(first, c.msg) {
					t.Errorf("first stderr line %q does not contain %q", first, c.msg)
				}
			}
		})
	}
}
