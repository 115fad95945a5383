package experiments

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fbo"
	"hgpsim/scenarios"
)

func init() {
	scenarios.Experiments.Register("fbo-table",
		"The fbo-aggitd paper's Table 2 and Fig. 2–3 on the scenario's federated data: every method × split (iid, shards) × τ × seed runs for the same budget of communication rounds; writes curves.csv (test accuracy and bytes against rounds), table.md (rounds to each target accuracy and final accuracy, mean ± standard deviation over seeds), claims.md (the same and the outer iterations to each target as mean ± 95 % half-width, FBO-AggITD against FedNest paired by seed), iterations.md (test accuracy after each outer iteration), accuracy.png and summary.json; lower_local, redraw and fednest_variant select the authors' released code's choices; then, beyond the paper, the same methods with each upload lost with probability upload_loss (loss.md).",
		func() scenarios.Experiment {
			return &FBOTable{Methods: []string{"fednest", "fbo-aggitd", "lfednest"}, Splits: []string{"iid", "shards"},
				Taus: []int{1, 5}, Seeds: 3, Rounds: 600, Targets: []float64{0.6, 0.7}, EvalRounds: 30,
				UploadLoss: []float64{0.1, 0.3}, LossSplits: []string{"iid"}, LossTau: 1,
				Participation: 0.1, LowerSteps: 5, Beta: 0.003, Alpha: 0.01, Lambda: 0.01, Neumann: 5, Batch: 64,
				LFedNestNonIID: [2]float64{0.001, 0.005}, LowerLocal: 1, FedNestVariant: "deterministic"}
		})
}

// FBOTable runs the comparison of FedNest, LFedNest and FBO-AggITD.
type FBOTable struct {
	Methods        []string   `yaml:"methods" doc:"algorithms compared: fednest, fbo-aggitd, lfednest"`
	Splits         []string   `yaml:"splits" doc:"data splits: iid and/or shards (the federated source's split)"`
	Taus           []int      `yaml:"taus" doc:"local x steps τ of One-Round-Upper, one table row each, 1 … 10⁴"`
	Seeds          int        `yaml:"seeds" doc:"seeds seed … seed + seeds − 1, 1 … 100"`
	Rounds         int        `yaml:"rounds" doc:"budget of communication rounds per run, 1 … 10⁶ (outer iterations = ceil(rounds / rounds per iteration))"`
	Targets        []float64  `yaml:"targets" doc:"test accuracies in (0, 1) whose first crossing is reported in rounds"`
	EvalRounds     int        `yaml:"eval_rounds" doc:"evaluate about every this many communication rounds (a whole number of outer iterations), 1 … 10⁶"`
	UploadLoss     []float64  `yaml:"upload_loss" doc:"beyond the paper: probabilities in (0, 1) that an upload is lost (star to_hub = 1 − p); empty: none"`
	LossSplits     []string   `yaml:"loss_splits" doc:"splits of the upload-loss runs"`
	LossTau        int        `yaml:"loss_tau" doc:"τ of the upload-loss runs"`
	Participation  float64    `yaml:"participation" doc:"fraction C of clients per outer iteration, in (0, 1]"`
	LowerSteps     int        `yaml:"lower_steps" doc:"N"`
	Beta           float64    `yaml:"beta" doc:"inner step"`
	Alpha          float64    `yaml:"alpha" doc:"outer step"`
	Lambda         float64    `yaml:"lambda" doc:"Neumann / HVP constant λ"`
	Neumann        int        `yaml:"neumann" doc:"T of FedNest (deterministic variant) and LFedNest"`
	Batch          int        `yaml:"batch" doc:"minibatch size (0: full batch)"`
	LFedNestNonIID [2]float64 `yaml:"lfednest_noniid" doc:"LFedNest's (beta, alpha) on the shards split (App. A.3: 0.001, 0.005)"`
	LowerLocal     int        `yaml:"lower_local" doc:"local y steps τ_i of One-Round-Lower per inner round, 1 … 10⁴ (the paper states none: 1; the FedNest authors' released code runs local_ep = 5 epochs)"`
	Redraw         bool       `yaml:"redraw" doc:"the server draws the clients afresh for every inner round, as the released code does (the papers: once per outer iteration)"`
	FedNestVariant string     `yaml:"fednest_variant" doc:"FedNest's Neumann variant: deterministic (the paper's sum) or released (the released code's accumulation)"`
}

// Validate implements scenarios.Experiment.
func (e *FBOTable) Validate(sc *scenarios.Scenario) error {
	if _, ok := sc.Data.Source.Params.(*datasets.FederatedData); !ok {
		return fmt.Errorf("data: fbo-table needs data kind federated, got %s", sc.Data.Source.Name)
	}
	if sc.Network.Topology.Name != "star" {
		return fmt.Errorf("network: fbo-table needs a star, got %s", sc.Network.Topology.Name)
	}
	if len(e.Methods) == 0 {
		return fmt.Errorf("methods: list at least one")
	}
	for _, m := range e.Methods {
		if m != "fednest" && m != "fbo-aggitd" && m != "lfednest" {
			return fmt.Errorf("methods: %q is not fednest, fbo-aggitd or lfednest", m)
		}
	}
	for _, s := range append(slices.Clone(e.Splits), e.LossSplits...) {
		if s != "iid" && s != "shards" {
			return fmt.Errorf("splits: %q is not iid or shards", s)
		}
	}
	if len(e.Splits) == 0 || len(e.Taus) == 0 || len(e.Targets) == 0 {
		return fmt.Errorf("splits, taus, targets: list at least one each")
	}
	for _, t := range append(slices.Clone(e.Taus), e.LossTau) {
		if t < 1 || t > 10_000 {
			return fmt.Errorf("taus, loss_tau: must be in [1, 10⁴], got %d", t)
		}
	}
	for _, t := range e.Targets {
		if !(t > 0 && t < 1) {
			return fmt.Errorf("targets: must be in (0, 1), got %v", t)
		}
	}
	for _, p := range e.UploadLoss {
		if !(p > 0 && p < 1) {
			return fmt.Errorf("upload_loss: must be in (0, 1), got %v", p)
		}
	}
	switch {
	case e.Seeds < 1 || e.Seeds > 100:
		return fmt.Errorf("seeds: must be in [1, 100], got %d", e.Seeds)
	case e.Rounds < 1 || e.Rounds > 1_000_000:
		return fmt.Errorf("rounds: must be in [1, 10⁶], got %d", e.Rounds)
	case e.EvalRounds < 1 || e.EvalRounds > 1_000_000:
		return fmt.Errorf("eval_rounds: must be in [1, 10⁶], got %d", e.EvalRounds)
	case e.FedNestVariant != "deterministic" && e.FedNestVariant != "released":
		return fmt.Errorf("fednest_variant: must be deterministic or released, got %q", e.FedNestVariant)
	}
	// Every derived algorithm must validate.
	for _, m := range e.Methods {
		for _, s := range e.Splits {
			a, err := e.algorithm(m, s, e.Taus[0])
			if err != nil {
				return err
			}
			if err := a.Params.Validate(sc.Nodes()); err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
		}
	}
	return nil
}

// Estimate implements scenarios.Experiment: the data and one run's models
// at a time; the time of every run at the assumed rate.
func (e *FBOTable) Estimate(sc *scenarios.Scenario) scenarios.Resources {
	f, c := sc.Data.Source.Params.Shape()
	hidden := int64(200)
	if m, ok := sc.Model.Arch.Params.(*models.MLPSpec); ok {
		hidden = int64(m.Hidden)
	}
	dx := hidden * int64(f+1)
	n := int64(sc.Nodes())
	r := scenarios.Resources{Live: []scenarios.ResourcePart{{Name: "data", Bytes: 70000 * int64(f+1) * 8 * 2},
		{Name: "models", Bytes: n * (dx*6 + 8*int64(c)*hidden) * 8}}}
	r.PeakBytes = 2 * r.LiveBytes()
	runs := len(e.Methods) * e.Seeds * (len(e.Splits)*len(e.Taus) + len(e.UploadLoss)*len(e.LossSplits))
	// Per communication round: participating clients × a batch × d_x, a few
	// products each.
	part := math.Max(1, e.Participation*float64(sc.Clients))
	r.Flops = float64(runs) * float64(e.Rounds) * part * float64(max(e.Batch, 64)) * float64(dx) * 3
	r.Seconds = r.Flops / scenarios.AssumedFlops
	return r
}

// roundsPerIter is the communication rounds of one outer iteration.
func (e *FBOTable) roundsPerIter(method string) int {
	switch method {
	case "fednest":
		return 2*e.LowerSteps + e.Neumann + 3
	case "lfednest":
		return e.LowerSteps + 1
	}
	return 2*e.LowerSteps + 3
}

// algorithm returns the derived algorithm choice.
func (e *FBOTable) algorithm(method, split string, tau int) (registry.Choice[optim.Algorithm], error) {
	var ch registry.Choice[optim.Algorithm]
	if err := ch.Choose(method); err != nil {
		return ch, fmt.Errorf("methods: %w", err)
	}
	rpi := e.roundsPerIter(method)
	p := fbo.Params{OuterSteps: (e.Rounds + rpi - 1) / rpi, Participation: e.Participation, LowerSteps: e.LowerSteps,
		Beta: e.Beta, Alpha: e.Alpha, Lambda: e.Lambda, Tau: tau, LowerLocal: e.LowerLocal, Lower: "svrg", Batch: e.Batch,
		EvalEvery: max(1, int(math.Round(float64(e.EvalRounds)/float64(rpi)))), Redraw: e.Redraw}
	switch a := ch.Params.(type) {
	case *fbo.AggITD:
		a.Params = p
	case *fbo.FedNest:
		a.Params, a.Neumann, a.Variant = p, e.Neumann, e.FedNestVariant
	case *fbo.LFedNest:
		p.Lower = "sgd"
		if split == "shards" {
			p.Beta, p.Alpha = e.LFedNestNonIID[0], e.LFedNestNonIID[1]
		}
		a.Params, a.Neumann = p, e.Neumann
	}
	return ch, nil
}

// fboCell is one configuration: its runs' curves.
type fboCell struct {
	Method string  `json:"method"`
	Split  string  `json:"split"`
	Tau    int     `json:"tau"`
	Loss   float64 `json:"upload_loss"`
	runs   []fboCurve
}

// fboCurve is one run: test accuracy and bytes against communication
// rounds.
type fboCurve struct {
	seed   uint64
	rounds []int
	acc    []float64
	bytes  []int64
}

// Run implements scenarios.Experiment.
func (e *FBOTable) Run(ctx context.Context, sc scenarios.Scenario, env scenarios.Env) (any, error) {
	var cells []*fboCell
	for _, split := range e.Splits {
		for _, tau := range e.Taus {
			for _, m := range e.Methods {
				cells = append(cells, &fboCell{Method: m, Split: split, Tau: tau})
			}
		}
	}
	for _, p := range e.UploadLoss {
		for _, split := range e.LossSplits {
			for _, m := range e.Methods {
				cells = append(cells, &fboCell{Method: m, Split: split, Tau: e.LossTau, Loss: p})
			}
		}
	}
	total := len(cells) * e.Seeds
	done := 0
	var csv bytes.Buffer
	csv.WriteString("method,split,tau,upload_loss,seed,round,bytes,test_acc\n")
	for _, c := range cells {
		for s := range e.Seeds {
			seed := sc.Seed + uint64(s)
			d, err := e.scenario(sc, c, seed)
			if err != nil {
				return nil, err
			}
			rep, err := env.Run(ctx, d, d.Name)
			if err != nil {
				return nil, fmt.Errorf("fbo-table: run %s: %w", d.Name, err)
			}
			cur := fboCurve{seed: seed}
			r := 0
			for _, ev := range rep.Evals {
				r += (ev.Round + 1) / 2
				cur.rounds = append(cur.rounds, r)
				cur.acc = append(cur.acc, ev.Agg.TestAcc)
				cur.bytes = append(cur.bytes, ev.Traffic.Bytes)
				fmt.Fprintf(&csv, "%s,%s,%d,%g,%d,%d,%d,%.6g\n", c.Method, c.Split, c.Tau, c.Loss, seed, r, ev.Traffic.Bytes, ev.Agg.TestAcc)
			}
			c.runs = append(c.runs, cur)
			env.Progress("fbo-table", done, total)
			done++
		}
	}
	if err := env.WriteFile("curves.csv", csv.Bytes()); err != nil {
		return nil, err
	}
	sum := e.summarize(cells)
	if err := env.WriteFile("table.md", []byte(e.markdown(sum, false))); err != nil {
		return nil, err
	}
	if err := env.WriteFile("claims.md", []byte(e.claims(sum))); err != nil {
		return nil, err
	}
	if err := env.WriteFile("iterations.md", []byte(e.perIteration(cells))); err != nil {
		return nil, err
	}
	if len(e.UploadLoss) > 0 {
		if err := env.WriteFile("loss.md", []byte(e.markdown(sum, true))); err != nil {
			return nil, err
		}
	}
	png, err := e.plot(cells)
	if err != nil {
		return nil, err
	}
	if err := env.WriteFile("accuracy.png", png); err != nil {
		return nil, err
	}
	if err := writeSummary(env, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// scenario is the training scenario of one run.
func (e *FBOTable) scenario(sc scenarios.Scenario, c *fboCell, seed uint64) (scenarios.Scenario, error) {
	a, err := e.algorithm(c.Method, c.Split, c.Tau)
	if err != nil {
		return sc, err
	}
	d := derive(sc, fmt.Sprintf("%s-%s-tau%d-loss%s-seed%d", c.Method, c.Split, c.Tau, strconv.FormatFloat(c.Loss, 'f', -1, 64), seed), seed, a.Name, a.Params)
	fd := *sc.Data.Source.Params.(*datasets.FederatedData)
	fd.Split = c.Split
	d.Data.Source = registry.Choice[datasets.Source]{Name: sc.Data.Source.Name, Params: &fd}
	st := *sc.Network.Topology.Params.(*graph.Star)
	if c.Loss > 0 {
		st.ToHub = 1 - c.Loss
	}
	d.Network.Topology = registry.Choice[graph.Topology]{Name: "star", Params: &st}
	return d, nil
}
