package run

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/internal/plugintest"
	"hgpsim/internal/registry"
	"hgpsim/optim"
	"hgpsim/optim/fed"
)

// planted are plug-ins registered only in this package's tests, each
// broken in a way TestEveryPluginResumes must catch; it skips them.
var planted = map[string]bool{"test-forgetful-fedadam": true}

func init() {
	optim.Algorithms.Register("test-forgetful-fedadam",
		"FedAdam whose moments are not declared to the server (a test plug-in that does not resume exactly).",
		func() optim.Algorithm {
			return &forgetfulAdam{FedAdam: fed.FedAdam{SecondMoment: fed.DefaultSecondMoment()}}
		})
}

// forgetfulAdam is FedAdam keeping m and v in slices of its own instead
// of declaring them on the server's state: an uninterrupted run is
// FedAdam's, a resumed one restarts them from m = 0, v = τ².
type forgetfulAdam struct {
	fed.FedAdam `yaml:",inline"`
}

// Plan implements optim.Algorithm.
func (a *forgetfulAdam) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	return a.PlanSteps(s, nil, func(*fed.ServerState) fed.StepFunc {
		m, v := make([]float64, len(s.X0)), make([]float64, len(s.X0))
		for j := range v {
			v[j] = a.Tau * a.Tau
		}
		return func(x, delta []float64) {
			for j, d := range delta {
				m[j] = a.Beta1*m[j] + (1-a.Beta1)*d
				v[j] = a.Beta2*v[j] + (1-a.Beta2)*d*d
				x[j] += a.ServerLR * m[j] / (math.Sqrt(v[j]) + a.Tau)
			}
		}
	})
}

// The test of TestEveryPluginResumes: a strategy that forgets its state
// on resume runs exactly as FedAdam when not stopped, and the check the
// registry-wide test applies to every plug-in reports its resumed run's
// metrics as different.
func TestEveryPluginResumesCatchesForgottenState(t *testing.T) {
	axis := registry.Of[optim.Algorithm]()
	metrics := func(kind string) []byte {
		sc, src, err := plugintest.Scenario(axis, kind)
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		sc.Runtime.Driver = "sequential"
		dir := t.TempDir()
		if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, metricsFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Equal(metrics("test-forgetful-fedadam"), metrics("fedadam")) {
		t.Fatal("the planted strategy does not run as FedAdam: the test would not show what it means to")
	}
	sc, _, err := plugintest.Scenario(axis, "test-forgetful-fedadam")
	if err != nil {
		t.Fatal(err)
	}
	problems := resumeProblems(t, sc)
	if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), "metrics.jsonl differs") {
		t.Fatalf("a strategy that forgets its state on resume passed the resume check: %q", problems)
	}
	t.Logf("caught: %s", strings.Join(problems, "; "))
}
