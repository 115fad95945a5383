package run

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"hgpsim/internal/plugintest"
	"hgpsim/internal/registry"
	"hgpsim/optim"
)

// statsSink keeps every evaluated round's stats, as the run's own sink
// receives them.
type statsSink struct {
	optim.NoSink
	rounds [][]optim.Stats
}

func (s *statsSink) Evaluated(ev *optim.RoundEvent) error {
	if !hasEstimates(ev.Clients) && observed(ev.Clients) {
		s.rounds = append(s.rounds, append([]optim.Stats(nil), ev.Clients...))
	}
	return nil
}

// The metrics schema (docs/metrics.md): a value a client did not measure
// is absent from metrics.jsonl, never 0. For every registered algorithm,
// its example run writes each split's keys exactly for the clients that
// evaluated that split, an Observe that leaves a split's size at 0 has
// measured nothing on it (so nothing measured is dropped), and an
// aggregate line has a mean only over clients that measured it.
func TestMetricsWriteOnlyWhatWasMeasured(t *testing.T) {
	var axis registry.Axis
	for _, a := range registry.Axes() {
		if a.Name() == "algorithm" {
			axis = a
		}
	}
	if axis == nil {
		t.Fatal("no algorithm axis")
	}
	splits := []struct {
		loss, acc string
		n         func(optim.Stats) int
		vals      func(optim.Stats) (float64, float64)
	}{
		{"train_loss", "train_acc", func(s optim.Stats) int { return s.TrainN }, func(s optim.Stats) (float64, float64) { return s.TrainLoss, s.TrainAcc }},
		{"val_loss", "val_acc", func(s optim.Stats) int { return s.ValN }, func(s optim.Stats) (float64, float64) { return s.ValLoss, s.ValAcc }},
		{"test_loss", "test_acc", func(s optim.Stats) int { return s.TestN }, func(s optim.Stats) (float64, float64) { return s.TestLoss, s.TestAcc }},
	}
	for _, kind := range axis.Kinds() {
		t.Run(kind, func(t *testing.T) {
			sc, src, err := plugintest.Scenario(axis, kind)
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			sc.Runtime.Driver = "sequential"
			dir := t.TempDir()
			if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			r, err := Build(sc)
			if err != nil {
				t.Fatal(err)
			}
			d, err := optim.NewSequential(r.Net, r.Factory())
			if err != nil {
				t.Fatal(err)
			}
			sink := &statsSink{}
			if _, err := d.Execute(context.Background(), r.Program(), sink); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			var clients, aggs []map[string]json.RawMessage
			lines := bufio.NewScanner(bytes.NewReader(b))
			lines.Buffer(nil, 1<<28)
			for lines.Scan() {
				var row map[string]json.RawMessage
				if err := json.Unmarshal(lines.Bytes(), &row); err != nil {
					t.Fatal(err)
				}
				if _, hyper := row["hypergradient"]; hyper {
					continue
				}
				if _, hyper := row["hypergradient_norm"]; hyper {
					continue
				}
				if _, ok := row["client"]; !ok {
					continue // not a round line
				}
				if string(row["client"]) == `"all"` {
					aggs = append(aggs, row)
				} else {
					clients = append(clients, row)
				}
			}
			if len(aggs) != len(sink.rounds) {
				t.Fatalf("%d aggregate lines for %d evaluated rounds", len(aggs), len(sink.rounds))
			}
			k := 0
			for ri, stats := range sink.rounds {
				measured := map[string]bool{}
				for _, st := range stats {
					if k >= len(clients) {
						t.Fatal("fewer client lines than evaluated clients")
					}
					row := clients[k]
					k++
					for _, sp := range splits {
						_, hasLoss := row[sp.loss]
						_, hasAcc := row[sp.acc]
						n := sp.n(st)
						if n > 0 {
							measured[sp.acc] = true
						}
						if hasLoss != (n > 0) || hasAcc != (n > 0) {
							t.Errorf("round %d: %s/%s written %v/%v for a client with %d rows", ri, sp.loss, sp.acc, hasLoss, hasAcc, n)
						}
						if l, a := sp.vals(st); n == 0 && (l != 0 || a != 0) {
							t.Errorf("round %d: a client measured %s = %v, %s = %v on no rows (the size was not set; the values would be lost)", ri, sp.loss, l, sp.acc, a)
						}
					}
				}
				for key, want := range map[string]bool{"train_loss": measured["train_acc"], "val_acc": measured["val_acc"], "test_acc": measured["test_acc"]} {
					if _, got := aggs[ri][key]; got != want {
						t.Errorf("round %d: aggregate %s written %v, measured by some client %v", ri, key, got, want)
					}
				}
			}
			if k != len(clients) {
				t.Errorf("%d client lines for %d evaluated clients", len(clients), k)
			}
		})
	}
}
