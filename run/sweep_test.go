package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hgpsim/scenarios"
)

func TestParseSeeds(t *testing.T) {
	for arg, want := range map[string][]uint64{"3": {3}, "1-3": {1, 2, 3}, "1-2,7, 9-9": {1, 2, 7, 9}} {
		got, err := ParseSeeds(arg)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v", arg, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "3-1", "1-", "-2", "0-20000"} {
		if _, err := ParseSeeds(bad); err == nil || !scenarios.IsInvalid(err) || !strings.Contains(err.Error(), "--seeds") {
			t.Errorf("ParseSeeds(%q): %v, want an invalid-input error naming --seeds", bad, err)
		}
	}
}

// Joined keys take the same value: a grid over exact link reliabilities.
func TestGridJoinedKeys(t *testing.T) {
	g, err := ParseGrid("network.delta_min+network.delta_max=0.2,0.5")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.yaml")
	src := "name: s\nclients: 4\nnetwork:\n  kind: stochastic-directed\nsgp:\n  rounds: 5\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs, err := PlanSweep(SweepPlan{Files: []string{path}, Grid: []GridAxis{g}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[1].Scenario.Name != "s-delta_min_delta_max_0.5" {
		t.Fatalf("jobs %d, second named %q", len(jobs), jobs[len(jobs)-1].Scenario.Name)
	}
	b, err := scenarios.Marshal(jobs[1].Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "delta_min: 0.5") || !strings.Contains(string(b), "delta_max: 0.5") {
		t.Errorf("both keys should be 0.5:\n%s", b)
	}
	for _, bad := range []string{"network.delta_min+=1", "a..b=1", "x=1,,2", "x", "=1"} {
		if _, err := ParseGrid(bad); err == nil || !strings.Contains(err.Error(), "--grid") {
			t.Errorf("ParseGrid(%q): %v", bad, err)
		}
	}
}
