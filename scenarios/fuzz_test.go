package scenarios

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the scenario parser. Whatever the
// input, Parse returns a valid scenario or one InvalidError of one line —
// it never panics — and a scenario it accepts survives a round trip
// through its resolved form unchanged.
func FuzzParse(f *testing.F) {
	for _, src := range []string{tiny, tinyPDBO, "", "clients: [1, 2\n", "network:\n  kind: ring\n  prob: 0.5\n",
		"network: {kind: edge-list, symmetric: true, edges: [{from: 0, to: 1}, {from: 1, to: 2, prob: 0.5}]}\nclients: 3\n",
		"network:\n  links: {kind: burst, length: 3}\n", "model: {kind: mlp, hidden: 4}\n", "data: {kind: emnist, dir: /x, split: digits}\n",
		"method_overrides:\n  pdbo-da: {outer_lr: 1}\n", "experiment:\n  kind: hgp-error\n  networks: [ring]\n  pairs: [[1, 0]]\n  seeds: 1\n  m: 1\n  linearize: last\n  sampling: alternate\n  lr: 0.1\n  classes: [0, 1]\n", "algorithm: {kind: fedavg, rounds: 3}\nnetwork: {kind: star, to_hub: 0.5}\n", "faults: [{kind: straggler, clients: [0], every: 3}]\n",
		"a: &x 1\nb: *x\n", "clients: !!binary AAAA\n", "? [1, 2]\n: 3\n"} {
		f.Add([]byte(src))
	}
	files, _ := filepath.Glob("*.yaml")
	paper, _ := filepath.Glob("paper/*.yaml")
	for _, p := range append(files, paper...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		sc, err := Parse("fuzz.yaml", b)
		if err != nil {
			if !IsInvalid(err) {
				t.Fatalf("error is not an InvalidError: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		out, err := Marshal(sc)
		if err != nil {
			t.Fatalf("Marshal of an accepted scenario: %v", err)
		}
		back, err := Parse("resolved.yaml", out)
		if err != nil {
			t.Fatalf("the resolved scenario does not parse back: %v\n%s", err, out)
		}
		out2, err := Marshal(back)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("resolved scenario changed on a round trip:\n%s\n---\n%s", out, out2)
		}
	})
}
