package scenarios

import (
	"strings"
	"testing"

	"hgpsim/optim/pdbo"
)

// Section hands out the scenario's own section values by their yaml key,
// and nil for a key the scenario does not have.
func TestSectionByKey(t *testing.T) {
	sc := Default()
	if got, ok := sc.Section("sgp").(*pdbo.SGPSpec); !ok || got != &sc.SGP {
		t.Errorf("Section(sgp) = %v, want a pointer to sc.SGP", sc.Section("sgp"))
	}
	if _, ok := sc.Section("hypergradient").(*pdbo.HypergradientSpec); !ok {
		t.Errorf("Section(hypergradient) = %T", sc.Section("hypergradient"))
	}
	if sc.Section("no-such-section") != nil {
		t.Error("an unknown key gave a section")
	}
}

// The local baselines' presets isolate the clients, other methods and a
// custom scenario do not, and a scenario that changes its method after
// validation keeps no isolation from before.
func TestMethodIsolation(t *testing.T) {
	for _, c := range []struct {
		method   string
		isolated bool
	}{{"local", true}, {"local-mtl", true}, {"sgp", false}, {"", false}} {
		sc := Default()
		sc.Method = "local"
		if err := sc.Validate(); err != nil {
			t.Fatal(err)
		}
		sc.Method = c.method
		if err := sc.Validate(); err != nil {
			t.Fatal(err)
		}
		if sc.SGP.Isolated != c.isolated {
			t.Errorf("method %q: isolated %v, want %v", c.method, sc.SGP.Isolated, c.isolated)
		}
	}
}

// A section an algorithm does not own names its owner.
func TestUnownedSectionNamesItsOwner(t *testing.T) {
	_, err := Parse("test", []byte("algorithm: fedavg\nnetwork: {kind: star}\nouter:\n  steps: 2\n"))
	if err == nil || !strings.Contains(err.Error(), "outer: means nothing for algorithm fedavg (it belongs to pdbo)") {
		t.Errorf("err = %v", err)
	}
}
