package scenarios

import (
	"bytes"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/internal/testscen"
	"runtime"
	"strings"
	"testing"
)

const tiny = testscen.Tiny

// tinyPDBO is testscen.TinyPDBO.
const tinyPDBO = testscen.TinyPDBO

func parseOK(t *testing.T, src string) Scenario {
	t.Helper()
	sc, err := Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return sc
}

func TestInvalidScenarios(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"malformed", "clients: [1, 2\n", "line"},
		{"unknown key", "clients: 4\nnetwork:\n  kind: ring\n  colour: red\n", `line 4: unknown key "colour" in network`},
		{"unknown top key", "clinets: 4\n", `line 1: unknown key "clinets" in the top level`},
		{"wrong type", "clients: many\n", "line 1"},
		{"delta above 1", "network:\n  kind: stochastic-directed\n  delta_max: 1.5\n", "network (stochastic-directed): delta_max must be in [delta_min, 1] = [0.4, 1], got 1.5"},
		{"delta zero", "network:\n  kind: stochastic-undirected\n  delta_min: 0\n", "network (stochastic-undirected): delta_min must be in (0, 1], got 0"},
		{"one client", "clients: 1\n", "clients: must be in [2, 10000], got 1"},
		{"unknown kind", "network:\n  kind: no-such-topology\n", `line 2: network.kind: unknown network kind "no-such-topology" (registered: `},
		{"bad variant", "sgp:\n  variant: sideways\n", "sgp.variant"},
		{"bad lr", "sgp:\n  lr:\n    base: -1\n", "sgp.lr: learning rate must be"},
		{"empty", "", "empty"},
		{"two documents", "clients: 3\n---\nclients: 4\n", "more than one YAML document"},
		{"estimator without head", "hypergradient:\n  estimator: hgp\n", "needs hyperparameters"},
		{"unknown estimator", "model:\n  head: label-weights\nhypergradient:\n  estimator: magic\n", "hypergradient.estimator"},
		{"alpha outside", "model:\n  head: label-weights\nhypergradient:\n  estimator: vr-hgp\n  alpha: 1.5\n", "alpha: must be in [0, 1], got 1.5"},
		{"m zero", "model:\n  head: label-weights\nhypergradient:\n  estimator: hgp\n  m: 0\n", "hypergradient.m: must be in [1, 1000000], got 0"},
		{"logistic multiclass", "model:\n  kind: logistic\n", "model (logistic): logistic is binary and needs data with 2 classes, got 5"},
		{"unknown model", "model:\n  kind: transformer\n", `line 2: model.kind: unknown model kind "transformer"`},
		{"empty ensemble", "model:\n  head: ensemble\n  k: 0\n", "model.k: the ensemble size must be in [1, 64], got 0"},
		{"unknown head", "model:\n  head: hats\n", `line 2: model.head: unknown head kind "hats"`},
		{"unknown method", "method: pdbo-xl\n", `method: unknown method kind "pdbo-xl" (registered: local, local-mtl`},
		{"pdbo without outer steps", "method: pdbo-da\n", "outer.steps: method pdbo-da needs at least one outer step"},
		{"outer lr zero", "method: pdbo-mtl\nouter:\n  steps: 2\n  lr: 0\n", "outer.lr: learning rate must be"},
		{"sgp lr negative", "sgp:\n  lr:\n    base: -0.1\n", "sgp.lr"},
		{"override unknown method", "method_overrides:\n  fedavg: {outer_lr: 1}\n", "method_overrides: unknown method"},
		{"beta outside", "model:\n  head: ensemble\nhypergradient:\n  estimator: vr-hgp\n  beta: -0.1\n", "beta: must be in [0, 1]"},
		{"real data fraction", "data:\n  kind: fashion-mnist\n  fraction: 0\n", "data (fashion-mnist): fraction must be in (0, 1], got 0"},
		// Keys that mean nothing for the chosen kind (issue 7 item 7).
		{"prob on stochastic-directed", "network:\n  kind: stochastic-directed\n  prob: 0.5\n",
			`line 3: unknown key "prob" in network for network stochastic-directed (allowed: delta_max, delta_min, failures, kind, links); prob means something only for network ` + kindsWithKey(graph.Topologies, "prob")},
		{"links on fully-connected", "network:\n  kind: fully-connected\n  links: {kind: burst, length: 5}\n", `line 3: unknown key "links" in network for network fully-connected`},
		{"edges on ring", "network:\n  kind: ring\n  edges: [{from: 0, to: 1}]\n", `line 3: unknown key "edges" in network for network ring`},
		{"kind after its parameters", "network:\n  delta_min: 0.5\n  kind: ring\n", `line 2: unknown key "delta_min" in network for network ring`},
		{"hidden on softmax", "model:\n  hidden: 64\n", `line 2: unknown key "hidden" in model for model softmax`},
		{"split on fashion-mnist", "data:\n  kind: fashion-mnist\n  split: letters\n", "split applies to emnist only"},
		{"unknown link process", "network:\n  links: gilbert\n", `line 2: network.links: unknown links kind "gilbert"`},
		{"burst parameter without burst", "network:\n  links: {length: 5}\n", `line 2: unknown key "length" in network.links for links bernoulli`},
		{"burst length zero", "network:\n  links: {kind: burst, length: 0}\n", "links burst: length must be in [1, 1048576] rounds, got 0"},
		{"duplicate key", "clients: 3\nclients: 4\n", `line 2: the top level: key "clients" appears twice (first on line 1)`},
		// Every size has a bound (issue 7 item 2).
		{"huge hidden layer", "model:\n  kind: mlp\n  hidden: 1000000000\n", "hidden must be in [1, 65536], got 1000000000"},
		{"huge ensemble", "model:\n  head: ensemble\n  k: 1e8\n", "model.k: the ensemble size must be in [1, 64], got 100000000"},
		{"too many clients", "clients: 10001\n", "clients: must be in [2, 10000], got 10001"},
		{"too many clients, sparse", "clients: 1000001\nnetwork: {kind: ring}\n", "clients: must be in [2, 1000000], got 1000001 (network ring)"},
		{"exact p̄ too large", "clients: 20000\nnetwork: {kind: ring}\nouter: {steps: 1}\nhypergradient: {estimator: hgp, estimates: \"true\"}\n", "at most 10000 clients, got 20000"},
		{"huge data", "data:\n  features: 2000000\n", "data (synthetic): features must be in [1, 1048576], got 2000000"},
		{"huge rounds", "sgp:\n  rounds: 100000000\n", "sgp.rounds: must be in [1, 10000000], got 100000000"},
		{"huge batch", "sgp:\n  batch: 100000000\n", "sgp.batch: must be in [0, 1048576]"},
		{"huge outer steps", "outer:\n  steps: 1000000\n", "outer.steps: must be in [0, 100000]"},
		{"fmmc too large", "clients: 2000\nnetwork:\n  kind: static-undirected\n", "weights fmmc is computed for at most 1000 nodes"},
		{"timeout too long", "runtime:\n  round_timeout: 100h\n", "runtime.round_timeout: must be in [0, 24h0m0s]"},
		// Another algorithm's sections (issue 8: one runtime for every algorithm).
		{"pdbo section on fedavg", "algorithm: fedavg\nnetwork: {kind: star}\nsgp:\n  rounds: 5\n", "sgp: means nothing for algorithm fedavg"},
		{"fedavg without a star", "algorithm: fedavg\n", "algorithm fedavg has a server, node 0, and needs a star network"},
		{"fedavg participation", "algorithm: {kind: fedavg, participation: 0}\nnetwork: {kind: star}\n", "algorithm (fedavg): participation must be in (0, 1], got 0"},
		{"unknown algorithm", "algorithm: no-such-algorithm\n", `line 1: algorithm: unknown algorithm kind "no-such-algorithm"`},
		{"mnist without dir", "data:\n  kind: mnist\n", "data (mnist): dir: mnist has no standard location"},
		{"hyper-representation on softmax", "algorithm: fbo-aggitd\nnetwork: {kind: star}\ndata: {features: 784}\nmodel: {kind: softmax, head: hyper-representation}\n", "model.head (hyper-representation): head hyper-representation splits an mlp (hidden layer outer, output layer inner) or a cnn"},
		{"hyper-representation with a conv inner", "algorithm: fbo-aggitd\nnetwork: {kind: star}\ndata: {features: 784}\nmodel: {kind: cnn, preset: fedbio-4conv, head: hyper-representation}\n", "model.head (hyper-representation): inner_layers 2: the inner variable x must be dense layers (with activations between them), and layer 8 is conv2d"},
		{"hyper-representation with no outer layer", "algorithm: fbo-aggitd\nnetwork: {kind: star}\ndata: {features: 784}\nmodel: {kind: cnn, preset: lenet, head: {kind: hyper-representation, inner_layers: 5}}\n", "inner_layers 5: the net has 5 parameterised layers, and at least one must remain in the body"},
		{"hyper-representation activation on a cnn", "algorithm: fbo-aggitd\nnetwork: {kind: star}\ndata: {features: 784}\nmodel: {kind: cnn, preset: lenet, head: {kind: hyper-representation, activation: tanh}}\n", "activation applies to model.kind mlp"},
		{"hyper-representation inner layers on an mlp", "algorithm: fbo-aggitd\nnetwork: {kind: star}\ndata: {features: 784}\nmodel: {kind: mlp, head: {kind: hyper-representation, inner_layers: 2}}\n", "an mlp's inner variable is its output layer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(c.src))
			if err == nil {
				t.Fatal("accepted an invalid scenario")
			}
			if !IsInvalid(err) {
				t.Errorf("error is not an InvalidError: %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// kindsWithKey lists the kinds of an axis that take key, as the hint of an
// unknown key names them: read from the registry, so that a new kind that
// takes the key needs no edit here.
func kindsWithKey(a registry.Axis, key string) string {
	var kinds []string
	for _, kind := range a.Kinds() {
		_, ps, _ := a.Describe(kind)
		for _, p := range ps {
			if p.Key == key {
				kinds = append(kinds, kind)
			}
		}
	}
	return strings.Join(kinds, ", ")
}

func TestDisconnectedGraphIsInvalid(t *testing.T) {
	sc := parseOK(t, `
clients: 4
network:
  kind: edge-list
  symmetric: true
  edges:
    - {from: 0, to: 1, prob: 0.5}
    - {from: 2, to: 3, prob: 0.5}
`)
	_, err := Check("test.yaml", sc, CheckOptions{MaxMemory: -1})
	if err == nil || !IsInvalid(err) {
		t.Fatalf("want an InvalidError for a disconnected graph, got %v", err)
	}
	if !strings.Contains(err.Error(), "strongly connected") {
		t.Errorf("error does not say what is wrong: %v", err)
	}
}

func TestResolvedScenarioRoundTrips(t *testing.T) {
	sc := parseOK(t, tiny)
	b, err := Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("resolved.yaml", b)
	if err != nil {
		t.Fatalf("the resolved scenario does not parse back: %v\n%s", err, b)
	}
	b2, _ := Marshal(back)
	if !bytes.Equal(b, b2) {
		t.Errorf("resolved scenario changed on a round trip:\n%s\n---\n%s", b, b2)
	}
}

func TestMethodOverridesApply(t *testing.T) {
	sc := parseOK(t, "method: pdbo-mtl-da\nouter:\n  steps: 1\nmethod_overrides:\n  pdbo-mtl-da: {outer_lr: 1.0, outer_lr_labels: 0.3, outer_l2_labels: 0.0005}\n  pdbo-da: {outer_lr: 7}\n")
	if sc.Outer.LR != 1.0 || sc.Outer.LRLabels != 0.3 || sc.Model.OuterL2Labels != 0.0005 {
		t.Errorf("overrides not applied: %+v %+v", sc.Outer, sc.Model)
	}
	if sc.Model.Head.Name != "ensemble-label-weights" || sc.Hypergradient.Estimator != "vr-hgp" {
		t.Errorf("preset not applied: head %q, estimator %q", sc.Model.Head.Name, sc.Hypergradient.Estimator)
	}
}

// Validation of 10,000 clients must not build the n² network (issue 7):
// it used to take 44 s and 4 GB before crashing.
func TestCheckLargeScenarioWithoutBuilding(t *testing.T) {
	sc := parseOK(t, "clients: 10000\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Check("big.yaml", sc, CheckOptions{MaxMemory: -1})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 50<<20 {
		t.Errorf("Check allocated %d MiB for 10,000 clients; the network must not be built", alloc>>20)
	}
	// The δ̄ matrix alone is 8·n² bytes.
	if res.LiveBytes() < 8*10000*10000 {
		t.Errorf("estimate %s misses the dense network", res)
	}
	// The same scenario under a 1 GiB limit is refused, with the estimate.
	_, err = Check("big.yaml", sc, CheckOptions{MaxMemory: 1 << 30})
	if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), "peak memory") || !strings.Contains(err.Error(), "network") {
		t.Fatalf("want a refusal naming the estimate, got %v", err)
	}
}

// A sparse network of 10⁶ clients is estimated without any n² term and
// refused under a limit it does not fit, naming the estimate.
func TestCheckSparseMillion(t *testing.T) {
	sc, err := Parse("big.yaml", []byte("name: big\nclients: 1000000\nnetwork: {kind: sparse-stochastic, support: {kind: torus}}\nsgp: {rounds: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := Estimate(sc)
	for _, p := range res.Live {
		if p.Name == "network" && p.Bytes > 1<<30 {
			t.Errorf("estimate %s for 10⁶ clients on a torus: the network is O(links), not 8·n² bytes", res)
		}
	}
	if res.LiveBytes() < 1000000*clientOverhead {
		t.Errorf("estimate %s misses the clients' bookkeeping", res)
	}
	_, err = Check("big.yaml", sc, CheckOptions{MaxMemory: 1 << 30})
	if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), "peak memory") {
		t.Fatalf("want a refusal naming the estimate, got %v", err)
	}
}

// Valid-looking sizes that do not fit are refused before anything is
// allocated, instead of ending in Go's fatal out-of-memory error.
func TestCheckRefusesWhatDoesNotFit(t *testing.T) {
	for name, src := range map[string]string{
		"wide mlp":     "model:\n  kind: mlp\n  hidden: 60000\ndata:\n  features: 1000\n",
		"dense oracle": "clients: 50\nmodel:\n  head: label-weights\ndata:\n  features: 1000\nhypergradient:\n  estimator: hgp\n  oracle: true\n",
		"huge data":    "clients: 1000\ndata:\n  features: 100000\n  train: 10000\n",
	} {
		sc := parseOK(t, src)
		_, err := Check(name, sc, CheckOptions{MaxMemory: 16 << 30})
		if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), "more than the limit set by --max-memory (16.0 GiB)") {
			t.Errorf("%s: want a refusal against the 16 GiB limit, got %v", name, err)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "512MB": 512e6, "2g": 2 << 30, "1024": 1024, "1.5 GiB": 3 << 29} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1GB", "0", "NaN"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}

// Overrides change any field, are validated exactly like the file, and a
// bad one is an error that names it (issue 12).
func TestOverrides(t *testing.T) {
	base := []byte("network:\n  kind: stochastic-directed\n  links: burst\nsgp:\n  rounds: 40\n")
	set := func(args ...string) (Scenario, error) {
		var sets []Set
		for _, a := range args {
			s, err := ParseSet(a)
			if err != nil {
				return Scenario{}, err
			}
			sets = append(sets, s)
		}
		return ParseWith("base.yaml", base, sets)
	}
	sc, err := set("network.delta_min=0.3", "network.links.length=20", "sgp.rounds=7", "seed=9",
		"network.failures=[{kind: churn, offline: 0.2, mean_offline: 5}]", "network.failures.0.offline=0.25")
	if err != nil {
		t.Fatal(err)
	}
	if sd := sc.Network.Topology.Params.(*graph.Stochastic); sd.DeltaMin != 0.3 || sd.DeltaMax != 0.8 {
		t.Errorf("delta_min/max %v/%v", sd.DeltaMin, sd.DeltaMax)
	}
	if b, ok := sc.Network.Topology.Params.(*graph.Stochastic).Process.Params.(*graph.Burst); !ok || b.Length != 20 {
		t.Errorf("links not burst of 20: %+v", sc.Network.Topology.Params.(*graph.Stochastic).Process)
	}
	if sc.SGP.Rounds != 7 || sc.Seed != 9 {
		t.Errorf("rounds %d seed %d", sc.SGP.Rounds, sc.Seed)
	}
	if c := sc.Network.Failures[0].Params.(*graph.Churn); c.Share != 0.25 || c.MeanOffline != 5 {
		t.Errorf("churn %+v", c)
	}
	// The shorthand of the grid example.
	if sc, err = set("network.links=bernoulli", "network.burst=12"); err != nil {
		t.Fatal(err)
	} else if b, ok := sc.Network.Topology.Params.(*graph.Stochastic).Process.Params.(*graph.Burst); !ok || b.Length != 12 {
		t.Errorf("network.burst=12 gave links %+v", sc.Network.Topology.Params.(*graph.Stochastic).Process)
	}
	if _, err := set("network.burst=0"); err == nil || !strings.Contains(err.Error(), "--set network.burst=0") {
		t.Errorf("network.burst=0: %v", err)
	}
	for arg, want := range map[string]string{
		"network.prob=0.5":        `--set network.prob=0.5: unknown key "prob" in network for network stochastic-directed`,
		"sgp.rounds=many":         "--set sgp.rounds=many: cannot unmarshal",
		"network.delta_min=2":     "delta_min must be in (0, 1], got 2 (with --set network.delta_min=2)",
		"sgp.rounds.x=1":          "--set sgp.rounds.x=1: cannot unmarshal !!map into int",
		"network.failures.3.x=1":  "--set network.failures.3.x=1:",
		"=3":                      "want key.path=value",
		"network.links.kind=nope": `unknown links kind "nope"`,
	} {
		_, err := set(arg)
		if err == nil || !IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: want an invalid-input error containing %q, got %v", arg, want, err)
		}
	}
}
