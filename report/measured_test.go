package report

import (
	"testing"

	"hgpsim/optim"
	"hgpsim/run"
)

// A value no client measured must be missing from the tables, not a 0
// that a mean over seeds would take in.
func TestUnmeasuredValuesAreMissing(t *testing.T) {
	server := run.Summary{Final: optim.Aggregate{TestAcc: 0.8, TestAccP: 0.8, TestRows: 100}}
	for _, name := range []string{"train_loss", "consensus", "val_acc"} {
		m, _ := LookupMetric(name)
		if v, ok := m.Value(&server); ok {
			t.Errorf("%s = %v on a run that never measured it, want missing", name, v)
		}
	}
	for _, name := range []string{"test_acc", "test_acc_p10"} {
		m, _ := LookupMetric(name)
		if v, ok := m.Value(&server); !ok || v != 0.8 {
			t.Errorf("%s = %v, %v, want 0.8, true", name, v, ok)
		}
	}
	measured := run.Summary{Final: optim.Aggregate{TrainLoss: 0, TrainClients: 3, XClients: 3, ValRows: 10}}
	for _, name := range []string{"train_loss", "consensus", "val_acc"} {
		m, _ := LookupMetric(name)
		if v, ok := m.Value(&measured); !ok || v != 0 {
			t.Errorf("%s = %v, %v on a run that measured a 0, want 0, true", name, v, ok)
		}
	}
}
