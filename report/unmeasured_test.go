package report

import (
	"context"
	"testing"

	"hgpsim/internal/plugintest"
	"hgpsim/internal/registry"
	"hgpsim/run"
)

// zeroIsAValue lists the metrics for which 0 is a measurement: counts (of
// blow-ups too: every evaluation is checked), an
// outer step, and Alg. 2's errors against the deliveries of the same
// rounds, exactly 0 when a client's bookkeeping matches what it sent.
var zeroIsAValue = map[string]bool{"best_step": true, "messages": true, "bytes": true, "dropped": true, "blowups": true,
	"p_bar_error_delivered": true, "delta_bar_error_delivered": true}

// TestNoMetricIsAnUnmeasuredZero runs the example of every registered
// algorithm and reads every metric off its summary, as the sweep tables
// take it from the finished run and as `hgpsim report` reads it back from
// the run folder: a metric the run did not measure (a federated run's
// training loss, the consensus distance of a server's one model) must be
// missing, never a 0 that a mean over seeds would take in.
func TestNoMetricIsAnUnmeasuredZero(t *testing.T) {
	var axis registry.Axis
	for _, a := range registry.Axes() {
		if a.Name() == "algorithm" {
			axis = a
		}
	}
	if axis == nil {
		t.Fatal("no algorithm axis")
	}
	for _, kind := range axis.Kinds() {
		t.Run(kind, func(t *testing.T) {
			sc, src, err := plugintest.Scenario(axis, kind)
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			sc.Runtime.Driver = "sequential"
			dir := t.TempDir()
			sum, err := run.Execute(context.Background(), sc, run.Options{OutDir: dir})
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			folder, err := run.LoadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []struct {
				from string
				sum  *run.Summary
			}{{"the run", sum}, {"the folder", folder.Summary}} {
				for _, m := range Metrics {
					if v, ok := m.Value(s.sum); ok && v == 0 && !zeroIsAValue[m.Name] {
						t.Errorf("%s: %s = 0, read off %s, where nothing was measured", kind, m.Name, s.from)
					}
				}
			}
		})
	}
}
