package experiments

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"hgpsim/datasets"
	"hgpsim/graph"
	"hgpsim/internal/registry"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fbo"
	"hgpsim/report"
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

// FBOTableSummary is summary.json.
type FBOTableSummary struct {
	Rounds  int            `json:"rounds"`
	Seeds   int            `json:"seeds"`
	Targets []float64      `json:"targets"`
	Cells   []FBOTableCell `json:"cells"`
}

// FBOTableCell is one configuration over its seeds.
type FBOTableCell struct {
	Method string  `json:"method"`
	Split  string  `json:"split"`
	Tau    int     `json:"tau"`
	Loss   float64 `json:"upload_loss"`
	// ToTarget[k] are the rounds at which each seed first reached
	// Targets[k] (-1: never within the budget).
	ToTarget [][]int   `json:"rounds_to_target"`
	Bytes    [][]int64 `json:"bytes_to_target"`
	// Iters[k] are the outer iterations at those rounds (-1: never).
	Iters [][]int   `json:"iterations_to_target"`
	Final []float64 `json:"final_acc"`
	RPI   int       `json:"rounds_per_outer_iteration"`
}

func (e *FBOTable) summarize(cells []*fboCell) *FBOTableSummary {
	s := &FBOTableSummary{Rounds: e.Rounds, Seeds: e.Seeds, Targets: e.Targets}
	for _, c := range cells {
		tc := FBOTableCell{Method: c.Method, Split: c.Split, Tau: c.Tau, Loss: c.Loss, RPI: e.roundsPerIter(c.Method)}
		for _, t := range e.Targets {
			var rs []int
			var bs []int64
			for _, r := range c.runs {
				at, b := -1, int64(-1)
				for k, a := range r.acc {
					if a >= t {
						at, b = r.rounds[k], r.bytes[k]
						break
					}
				}
				rs, bs = append(rs, at), append(bs, b)
			}
			tc.ToTarget = append(tc.ToTarget, rs)
			tc.Bytes = append(tc.Bytes, bs)
			its := make([]int, len(rs))
			for k, r := range rs {
				its[k] = -1
				if r >= 0 {
					its[k] = r / tc.RPI
				}
			}
			tc.Iters = append(tc.Iters, its)
		}
		for _, r := range c.runs {
			if len(r.acc) > 0 {
				tc.Final = append(tc.Final, r.acc[len(r.acc)-1])
			}
		}
		s.Cells = append(s.Cells, tc)
	}
	return s
}

// meanSD returns the mean and the sample standard deviation.
func meanSD(v []float64) (float64, float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	if len(v) == 1 {
		return m, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(v)-1))
}

// markdown renders the table of the loss-free runs (Table 2's shape) or of
// the upload-loss runs beside their loss-free counterparts.
func (e *FBOTable) markdown(s *FBOTableSummary, loss bool) string {
	var b strings.Builder
	b.WriteString("| method | rounds/outer it. | data | τ |")
	if loss {
		b.WriteString(" upload loss |")
	}
	for _, t := range e.Targets {
		fmt.Fprintf(&b, " rounds to %g%% |", 100*t)
	}
	b.WriteString(" final accuracy (%) |\n|---|---|---|---|")
	if loss {
		b.WriteString("---|")
	}
	b.WriteString(strings.Repeat("---|", len(e.Targets)+1) + "\n")
	for _, c := range s.Cells {
		if loss {
			if !(c.Loss > 0 || (c.Tau == e.LossTau && slices.Contains(e.LossSplits, c.Split))) {
				continue
			}
		} else if c.Loss > 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d |", c.Method, c.RPI, c.Split, c.Tau)
		if loss {
			fmt.Fprintf(&b, " %g |", c.Loss)
		}
		for k := range e.Targets {
			b.WriteString(" " + roundsCell(c.ToTarget[k]) + " |")
		}
		m, sd := meanSD(c.Final)
		fmt.Fprintf(&b, " %.2f ± %.2f |\n", 100*m, 100*sd)
	}
	return b.String()
}

// roundsCell is mean ± sd over the seeds that reached the target, with the
// count when some did not.
func roundsCell(rs []int) string {
	var got []float64
	for _, r := range rs {
		if r >= 0 {
			got = append(got, float64(r))
		}
	}
	if len(got) == 0 {
		return "not reached"
	}
	m, sd := meanSD(got)
	s := fmt.Sprintf("%.0f ± %.0f", m, sd)
	if len(got) < len(rs) {
		s += fmt.Sprintf(" (%d of %d seeds)", len(got), len(rs))
	}
	return s
}

// claims renders the loss-free cells for the claims table: rounds and
// outer iterations to each target and the final accuracy as mean ± the
// half-width of the 95 % Student-t interval over the seeds (a target some
// seed missed is reported as such), and, per split and τ, FBO-AggITD
// against FedNest paired by seed.
func (e *FBOTable) claims(s *FBOTableSummary) string {
	var b strings.Builder
	b.WriteString("| method | data | τ |")
	for _, t := range e.Targets {
		fmt.Fprintf(&b, " rounds to %g%% | outer its. to %g%% |", 100*t, 100*t)
	}
	b.WriteString(" final accuracy (%) |\n|---|---|---|" + strings.Repeat("---|", 2*len(e.Targets)+1) + "\n")
	means := map[string]float64{}
	for _, c := range s.Cells {
		if c.Loss > 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d |", c.Method, c.Split, c.Tau)
		for k := range e.Targets {
			r, ok := intervalOf(c.ToTarget[k])
			it, _ := intervalOf(c.Iters[k])
			if !ok {
				b.WriteString(" not reached by every seed | |")
				continue
			}
			fmt.Fprintf(&b, " %.0f ± %.0f | %.1f ± %.1f |", r.Mean, r.Half, it.Mean, it.Half)
			means[fmt.Sprintf("%s/%s/%d/%d", c.Method, c.Split, c.Tau, k)] = r.Mean
		}
		f := report.MeanInterval(c.Final)
		fmt.Fprintf(&b, " %.2f ± %.2f |\n", 100*f.Mean, 100*f.Half)
	}
	b.WriteString("\nFBO-AggITD against FedNest, paired by seed (same data and initial model): the ratio FBO-AggITD / FedNest of their rounds and of their outer iterations to each target, and the difference of final accuracy, mean ± 95 % half-width:\n\n| data | τ |")
	for _, t := range e.Targets {
		fmt.Fprintf(&b, " rounds ratio to %g%% | iterations ratio to %g%% |", 100*t, 100*t)
	}
	b.WriteString(" final accuracy difference (points) |\n|---|---|" + strings.Repeat("---|", 2*len(e.Targets)+1) + "\n")
	for _, sp := range e.Splits {
		for _, tau := range e.Taus {
			ia, iF, ok := fboPair(len(s.Cells), func(k int) (string, string, int, float64) {
				c := &s.Cells[k]
				return c.Method, c.Split, c.Tau, c.Loss
			}, sp, tau)
			if !ok {
				continue
			}
			a, f := &s.Cells[ia], &s.Cells[iF]
			fmt.Fprintf(&b, "| %s | %d |", sp, tau)
			for k := range e.Targets {
				for _, pair := range [][2][]int{{a.ToTarget[k], f.ToTarget[k]}, {a.Iters[k], f.Iters[k]}} {
					r, ok := pairedRatio(pair[0], pair[1])
					if !ok {
						b.WriteString(" – |")
						continue
					}
					fmt.Fprintf(&b, " %.2f ± %.2f |", r.Mean, r.Half)
				}
			}
			var d []float64
			for k := range min(len(a.Final), len(f.Final)) {
				d = append(d, 100*(a.Final[k]-f.Final[k]))
			}
			di := report.MeanInterval(d)
			fmt.Fprintf(&b, " %+.2f ± %.2f |\n", di.Mean, di.Half)
		}
	}
	return b.String()
}

// fboPair finds, among n cells described by cell, the last FBO-AggITD and
// the last FedNest cell of split and tau without upload loss: the pair the
// paired comparisons are taken over. ok is false unless both exist.
func fboPair(n int, cell func(k int) (method, split string, tau int, loss float64), split string, tau int) (a, f int, ok bool) {
	a, f = -1, -1
	for k := range n {
		m, sp, t, loss := cell(k)
		if loss != 0 || sp != split || t != tau {
			continue
		}
		switch m {
		case "fbo-aggitd":
			a = k
		case "fednest":
			f = k
		}
	}
	return a, f, a >= 0 && f >= 0
}

// pairedRatio is report.MeanInterval of num[k]/den[k] over the seeds,
// false when a seed of either never reached the target.
func pairedRatio(num, den []int) (report.Interval, bool) {
	var r []float64
	for k := range min(len(num), len(den)) {
		if num[k] <= 0 || den[k] <= 0 {
			return report.Interval{}, false
		}
		r = append(r, float64(num[k])/float64(den[k]))
	}
	return report.MeanInterval(r), len(r) > 0
}

// intervalOf is report.MeanInterval of vs, false when some seed never
// reached the target (-1).
func intervalOf(vs []int) (report.Interval, bool) {
	f := make([]float64, len(vs))
	for k, v := range vs {
		if v < 0 {
			return report.Interval{}, false
		}
		f[k] = float64(v)
	}
	return report.MeanInterval(f), true
}

// perIterationMax is the last outer iteration iterations.md reports.
const perIterationMax = 40

// perIteration renders the progress per outer iteration: the test accuracy
// after iteration k of FedNest and FBO-AggITD (mean ± 95 % half-width over
// the seeds) and their difference paired by seed, at the iterations both
// evaluated, for each loss-free split and τ. Equal progress per iteration
// makes the ratio of rounds to a target the ratio of rounds per iteration.
func (e *FBOTable) perIteration(cells []*fboCell) string {
	var b strings.Builder
	b.WriteString("Test accuracy (%) after outer iteration k, mean ± 95 % half-width over the seeds; the difference FBO-AggITD − FedNest paired by seed.\n")
	for _, sp := range e.Splits {
		for _, tau := range e.Taus {
			ia, iF, ok := fboPair(len(cells), func(k int) (string, string, int, float64) {
				c := cells[k]
				return c.Method, c.Split, c.Tau, c.Loss
			}, sp, tau)
			if !ok {
				continue
			}
			a, f := cells[ia], cells[iF]
			accA, accF := e.accAt(a), e.accAt(f)
			fmt.Fprintf(&b, "\n%s, τ = %d:\n\n| k | FedNest | FBO-AggITD | difference (points) |\n|---|---|---|---|\n", sp, tau)
			for k := 1; k <= perIterationMax; k++ {
				va, vf := accA[k], accF[k]
				if len(va) == 0 || len(va) != len(vf) {
					continue
				}
				d := make([]float64, len(va))
				for s := range va {
					d[s] = 100 * (va[s] - vf[s])
				}
				ia, iff, id := report.MeanInterval(scale(va, 100)), report.MeanInterval(scale(vf, 100)), report.MeanInterval(d)
				fmt.Fprintf(&b, "| %d | %.2f ± %.2f | %.2f ± %.2f | %+.2f ± %.2f |\n", k, iff.Mean, iff.Half, ia.Mean, ia.Half, id.Mean, id.Half)
			}
		}
	}
	return b.String()
}

// accAt maps an outer iteration to the test accuracies of the cell's runs
// evaluated after it (every run, or the iteration is left out).
func (e *FBOTable) accAt(c *fboCell) map[int][]float64 {
	rpi := e.roundsPerIter(c.Method)
	out := map[int][]float64{}
	for _, r := range c.runs {
		for k, round := range r.rounds {
			out[round/rpi] = append(out[round/rpi], r.acc[k])
		}
	}
	for k, v := range out {
		if len(v) != len(c.runs) {
			delete(out, k)
		}
	}
	return out
}

// scale returns s·v.
func scale(v []float64, s float64) []float64 {
	out := make([]float64, len(v))
	for k, x := range v {
		out[k] = s * x
	}
	return out
}
