package scenarios

import (
	"strings"
	"testing"
)

// Bursty or partitioned links without the weight guard are valid but
// warned about, citing the measured divergence rates; guarded, or with
// independent links, or without SGP, nothing is said.
func TestWarningsOnUnguardedBurstyLinks(t *testing.T) {
	for _, c := range []struct {
		body, want string
	}{
		{"clients: 6\nnetwork: {kind: stochastic-directed, links: burst}\n", "network.links is burst, with sgp.weight_floor 0"},
		{"clients: 6\nnetwork: {kind: stochastic-directed, links: {kind: gilbert-elliott, mean_burst: 2}}\n", "network.links is gilbert-elliott, with"},
		{"clients: 6\nnetwork: {kind: stochastic-directed, failures: [{kind: partition, groups: [[0, 1, 2]], from: 5, to: 9}]}\n", "network.failures[0] is a partition, with"},
		{"clients: 6\nnetwork: {kind: stochastic-directed, links: burst}\nsgp: {weight_floor: 0.3}\n", ""},
		{"clients: 6\nnetwork: {kind: stochastic-directed}\n", ""},
		{"clients: 6\nalgorithm: {kind: fedavg, rounds: 3}\nnetwork: {kind: star, links: burst}\n", ""},
	} {
		sc := parseOK(t, c.body)
		w := strings.Join(Warnings(sc), "\n")
		if (c.want == "") != (w == "") || !strings.Contains(w, c.want) {
			t.Errorf("%q: warnings %q, want %q", c.body, w, c.want)
		}
		if c.want != "" && !strings.Contains(w, "10 of 10 seeds") {
			t.Errorf("%q: the warning cites no measured rate: %q", c.body, w)
		}
	}
}
