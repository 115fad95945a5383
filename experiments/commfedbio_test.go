package experiments

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hgpsim/run"
	"hgpsim/scenarios"
)

const tinyFedBio = `
name: tiny-comm-fedbio
seed: 2
clients: 3
network: {kind: star, prob: 1}
data: {kind: noisy-labels, images: synthetic, features: 4, classes: 3, train: 30, val: 20, test: 20, rho: 0.4}
model: {kind: softmax, l2: 0.001}
experiment:
  kind: comm-fedbio
  rounds: 4
  lr: 0.2
  batch: 8
  eval_every: 2
  iterations: 3
  alpha: 0.3
  hvp_batch: 0
  noises: [iid, non-iid]
  methods: [iter-topk, fedavg, fedavg-oracle, preprocess]
  curve_compression: 2
  variants: [iter-topk, iter-sketch, non-iter]
  rates: [2, 4]
  thresholds: [0.1, 0.3]
`

// The experiment on a tiny synthetic federation: every file written, the
// rows it promises, the oracle's F1 is 1 and FedAvg's 0, the (variant,
// rate) of the curves reused in the F1 table, and two runs agree.
func TestCommFedBiOExperiment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(path, []byte(tinyFedBio), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var outs [2]string
	for k := range outs {
		outs[k] = t.TempDir()
		if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: outs[k]}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"curves.csv", "f1.csv", "bytes.csv", "accuracy.png", "f1.png", "summary.json"} {
		a, err := os.ReadFile(filepath.Join(outs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(outs[1], name))
		if !strings.HasSuffix(name, ".png") && string(a) != string(b) {
			t.Errorf("%s differs between two runs", name)
		}
	}
	f, _ := os.Open(filepath.Join(outs[0], "f1.csv"))
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*3*2 {
		t.Errorf("f1.csv has %d rows, want %d", len(rows), 1+2*3*2)
	}
	b, _ := os.ReadFile(filepath.Join(outs[0], "bytes.csv"))
	by, _ := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	for _, r := range by[1:] {
		switch r[1] {
		case "fedavg-oracle":
			if r[6] != "1" {
				t.Errorf("oracle F1 %s, want 1", r[6])
			}
		case "fedavg":
			if r[6] != "0" || r[4] != "0" {
				t.Errorf("fedavg F1 %s, hyper bytes %s; want 0, 0", r[6], r[4])
			}
		}
	}
}

func TestCommFedBiOExperimentValidate(t *testing.T) {
	for _, bad := range []string{"noises: [nope]", "methods: [focus]", "rates: [0.5]", "variants: [fedavg]"} {
		key := strings.SplitN(bad, ":", 2)[0]
		lines := strings.Split(tinyFedBio, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "  "+key+":") {
				lines[i] = "  " + bad
			}
		}
		text := strings.Join(lines, "\n")
		path := filepath.Join(t.TempDir(), "bad.yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := scenarios.Load(path); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
