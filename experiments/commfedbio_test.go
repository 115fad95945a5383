package experiments

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
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
		switch r[3] {
		case "fedavg-oracle":
			if r[8] != "1" {
				t.Errorf("oracle F1 %s, want 1", r[8])
			}
		case "fedavg":
			if r[8] != "0" || r[6] != "0" {
				t.Errorf("fedavg F1 %s, hyper bytes %s; want 0, 0", r[8], r[6])
			}
		}
	}
}

// Seeds, flips and the noise record: a claims row per panel and method
// with as many seeds as asked, FedAvg's accuracy at its own peak equal to
// its best, the oracle's λ zero on the noisy samples and one on the clean
// (so no share of the objective on them), FedAvg's λ one everywhere, a
// noise.csv row per evaluation, and per-seed rows that differ between
// seeds.
func TestCommFedBiOExperimentSeedsAndNoise(t *testing.T) {
	text := strings.Replace(tinyFedBio, "  noises: [iid, non-iid]", "  noises: [iid]\n  flips: [uniform, pair]\n  seeds: [2, 5, 8]\n  noise_stats: true", 1)
	text = strings.Replace(text, "  methods: [iter-topk, fedavg, fedavg-oracle, preprocess]", "  methods: [iter-topk, fedavg, fedavg-oracle]", 1)
	text = strings.Replace(text, "  rates: [2, 4]", "  rates: [2]", 1)
	path := filepath.Join(t.TempDir(), "seeds.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := run.Execute(context.Background(), sc, run.Options{OutDir: out}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []map[string]string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var m []map[string]string
		for _, r := range rows[1:] {
			row := map[string]string{}
			for k, h := range rows[0] {
				row[h] = r[k]
			}
			m = append(m, row)
		}
		return m
	}
	claims := read("claims.csv")
	// 2 flips × (3 methods + the variants iter-sketch, non-iter at ×2; iter-topk ×2 is a curve).
	if len(claims) != 2*(3+2) {
		t.Errorf("claims.csv: %d rows, want %d", len(claims), 2*(3+2))
	}
	for _, c := range claims {
		if c["seeds"] != "3" || c["final_test_acc_half"] == "" {
			t.Errorf("claim %s %s: %s seeds, half-width %q", c["flip"], c["method"], c["seeds"], c["final_test_acc_half"])
		}
		switch c["method"] {
		case "fedavg":
			if c["test_acc_at_fedavg_peak"] != c["best_test_acc"] || c["lambda_noisy"] != "1" || c["lambda_clean"] != "1" {
				t.Errorf("fedavg %s: at its peak %s, best %s; λ %s / %s", c["flip"], c["test_acc_at_fedavg_peak"], c["best_test_acc"], c["lambda_noisy"], c["lambda_clean"])
			}
			if s, err := strconv.ParseFloat(c["noisy_grad_share"], 64); err != nil || !(s > 0 && s < 1) {
				t.Errorf("fedavg %s: noisy gradient share %q", c["flip"], c["noisy_grad_share"])
			}
		case "fedavg-oracle":
			if c["lambda_noisy"] != "0" || c["lambda_clean"] != "1" || c["noisy_grad_share"] != "0" || c["noisy_loss_share"] != "0" {
				t.Errorf("oracle %s: λ %s / %s, shares %s %s", c["flip"], c["lambda_noisy"], c["lambda_clean"], c["noisy_loss_share"], c["noisy_grad_share"])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "noise.png")); err != nil {
		t.Error(err)
	}
	noise := read("noise.csv")
	// eval_every 2 of 4 rounds: 2 points per run; 3 seeds × 2 flips × 5 runs.
	if len(noise) != 3*2*5*2 {
		t.Errorf("noise.csv: %d rows, want %d", len(noise), 3*2*5*2)
	}
	perSeed := map[string]string{}
	for _, r := range read("bytes.csv") {
		if r["method"] == "iter-topk" && r["flip"] == "pair" {
			perSeed[r["seed"]] = r["final_test_acc"] + "/" + r["f1"]
		}
	}
	if len(perSeed) != 3 || perSeed["2"] == perSeed["5"] && perSeed["5"] == perSeed["8"] {
		t.Errorf("per-seed iter-topk rows: %v", perSeed)
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

// The paper scenarios of the family load and validate (the claims runs'
// seeds and flips included).
func TestCommFedBiOPaperScenarios(t *testing.T) {
	files, err := filepath.Glob("../scenarios/paper/comm-fedbio-*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("comm-fedbio paper scenarios: %v, %v", files, err)
	}
	for _, f := range files {
		if _, err := scenarios.Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
