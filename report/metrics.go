package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"hgpsim/optim"
	"hgpsim/run"
)

// Metric is a number read off one finished run of a sweep: a column of
// results.csv and study.csv, and a quantity --plot can draw.
type Metric struct {
	Name string
	Doc  string
	// Value returns the run's number, false when the run has none (a
	// method without an outer loop has no hyper-gradient).
	Value func(s *run.Summary) (float64, bool)
	// PerRound reads the same quantity off one evaluation, for curves
	// against the round, false when the evaluation did not measure it;
	// nil when it is a whole-run number.
	PerRound func(a optim.Aggregate) (float64, bool)
	// Log draws the metric on a log axis when all its values are positive:
	// errors, distances and weights span orders of magnitude when a
	// network fails.
	Log bool
}

func always(f func(s *run.Summary) float64) func(s *run.Summary) (float64, bool) {
	return func(s *run.Summary) (float64, bool) { return f(s), true }
}

// maxOverEvals is the largest value of f over the evaluations of a run
// that measured it (measured), +Inf if any is not finite (a diverged
// run), and the final value for a run that reported no evaluation list;
// false when no evaluation measured it.
func maxOverEvals(s *run.Summary, f func(a optim.Aggregate) float64, measured func(a optim.Aggregate) bool) (float64, bool) {
	if len(s.Evals) == 0 {
		return f(s.Final), measured(s.Final)
	}
	m, ok := math.Inf(-1), false
	for _, e := range s.Evals {
		if !measured(e.Agg) {
			continue
		}
		v := f(e.Agg)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.Inf(1), true
		}
		m, ok = max(m, v), true
	}
	return m, ok
}

func traffic(s *run.Summary, f func(messages, bytes, dropped int64) int64) float64 {
	var t int64
	for _, v := range s.Traffic {
		t += f(v.Messages, v.Bytes, v.Dropped)
	}
	return float64(t)
}

// Metrics lists every metric in the order of results.csv's columns. A
// value the run did not measure (a federated run's clients evaluate no
// training split) is missing, an empty cell, never a 0 to be averaged in.
var Metrics = []Metric{
	{Name: "test_acc", Doc: "test accuracy, weighted by local test size, at the headline evaluation (best validation outer step, else final)",
		Value: func(s *run.Summary) (float64, bool) { h := s.Headline(); return h.TestAcc, h.TestRows > 0 }, PerRound: func(a optim.Aggregate) (float64, bool) { return a.TestAcc, a.TestRows > 0 }},
	{Name: "test_acc_p10", Doc: "10th percentile of the clients' test accuracies at the headline evaluation",
		Value: func(s *run.Summary) (float64, bool) { h := s.Headline(); return h.TestAccP, h.TestRows > 0 }, PerRound: func(a optim.Aggregate) (float64, bool) { return a.TestAccP, a.TestRows > 0 }},
	{Name: "val_acc", Doc: "validation accuracy at the headline evaluation",
		Value: func(s *run.Summary) (float64, bool) { h := s.Headline(); return h.ValAcc, h.ValRows > 0 }, PerRound: func(a optim.Aggregate) (float64, bool) { return a.ValAcc, a.ValRows > 0 }},
	{Name: "best_step", Doc: "outer step with the best validation accuracy (runs with an outer loop)",
		Value: func(s *run.Summary) (float64, bool) {
			if s.Best == nil {
				return 0, false
			}
			return float64(s.Best.Step), true
		}},
	{Name: "train_loss", Log: true, Doc: "final training loss, mean over clients",
		Value: func(s *run.Summary) (float64, bool) { return s.Final.TrainLoss, s.Final.TrainClients > 0 }, PerRound: func(a optim.Aggregate) (float64, bool) { return a.TrainLoss, a.TrainClients > 0 }},
	{Name: "max_train_loss", Log: true, Doc: "largest training loss over all evaluations (+Inf if one was not finite)",
		Value: func(s *run.Summary) (float64, bool) {
			return maxOverEvals(s, func(a optim.Aggregate) float64 { return a.TrainLoss }, func(a optim.Aggregate) bool { return a.TrainClients > 0 })
		}},
	{Name: "consensus", Log: true, Doc: "final consensus distance sqrt(1/n Σ‖x_i − x̄‖²) (runs whose clients hold parameters: none for a server's one model)",
		Value: func(s *run.Summary) (float64, bool) { return s.Final.Consensus, s.Final.ConsensusMeasured() }, PerRound: func(a optim.Aggregate) (float64, bool) { return a.Consensus, a.ConsensusMeasured() }},
	{Name: "max_consensus", Log: true, Doc: "largest consensus distance over all evaluations (+Inf if one was not finite)",
		Value: func(s *run.Summary) (float64, bool) {
			return maxOverEvals(s, func(a optim.Aggregate) float64 { return a.Consensus }, optim.Aggregate.ConsensusMeasured)
		}},
	{Name: "min_weight", Log: true, Doc: "final smallest push-sum weight min_i ω_i (a gradient step moves x_i by the step size over ω_i)",
		Value:    func(s *run.Summary) (float64, bool) { return s.Final.MinWeight, s.Final.MinWeight > 0 },
		PerRound: func(a optim.Aggregate) (float64, bool) { return a.MinWeight, a.MinWeight > 0 }},
	{Name: "lowest_weight", Log: true, Doc: "smallest push-sum weight over all evaluations",
		Value: func(s *run.Summary) (float64, bool) {
			low := s.Final.MinWeight
			for _, e := range s.Evals {
				if e.Agg.MinWeight > 0 && (low == 0 || e.Agg.MinWeight < low) {
					low = e.Agg.MinWeight
				}
			}
			return low, low > 0
		}},
	{Name: "hypergradient_norm", Log: true, Doc: "‖d̂_λ F̄‖ of the last hyper-gradient estimate, stacked over clients",
		Value: func(s *run.Summary) (float64, bool) {
			if s.Hypergradient == nil {
				return 0, false
			}
			return s.Hypergradient.Norm, true
		}},
	{Name: "max_hypergradient_norm", Log: true, Doc: "largest hyper-gradient norm over the outer steps",
		Value: func(s *run.Summary) (float64, bool) {
			m, ok := 0.0, false
			for _, o := range s.Outer {
				if o.HypergradientNorm > 0 || math.IsInf(o.HypergradientNorm, 1) {
					m, ok = max(m, o.HypergradientNorm), true
				}
			}
			return m, ok
		}},
	{Name: "oracle_rel_error", Log: true, Doc: "relative error of the last hyper-gradient against the dense oracle (hypergradient.oracle: true)",
		Value: func(s *run.Summary) (float64, bool) {
			if s.Hypergradient == nil || s.Hypergradient.OracleRelError == nil {
				return 0, false
			}
			return *s.Hypergradient.OracleRelError, true
		}},
	{Name: "p_bar_error", Log: true, Doc: "max_ij |p̂_ij − E p_ij|: Alg. 2's estimate against the network model",
		Value: estimate(func(e *run.EstimateError) float64 { return e.PBarMaxAbs })},
	{Name: "delta_bar_error", Log: true, Doc: "max_ij |δ̂_j→i − δ̄_j→i| against the network model",
		Value: estimate(func(e *run.EstimateError) float64 { return e.DeltaBarMaxAbs })},
	{Name: "p_bar_error_delivered", Log: true, Doc: "p̄ estimation error against what the network delivered in the same rounds",
		Value: estimate(func(e *run.EstimateError) float64 { return e.Delivered.PBarMaxAbs })},
	{Name: "delta_bar_error_delivered", Log: true, Doc: "δ̄ estimation error against the delivery frequency of the same rounds",
		Value: estimate(func(e *run.EstimateError) float64 { return e.Delivered.DeltaBarMaxAbs })},
	{Name: "blowups", Doc: "phases in which a value blew up: a client's training loss more than 10³ times its loss at the phase's first evaluation, a hyper-gradient norm more than 10³ times the run's first, or one not finite (summary.json: blowups)",
		Value: always(func(s *run.Summary) float64 { return float64(len(s.Blowups)) })},
	{Name: "messages", Doc: "messages sent, all phases",
		Value: always(func(s *run.Summary) float64 { return traffic(s, func(m, _, _ int64) int64 { return m }) })},
	{Name: "bytes", Doc: "payload bytes sent, all phases",
		Value: always(func(s *run.Summary) float64 { return traffic(s, func(_, b, _ int64) int64 { return b }) })},
	{Name: "dropped", Doc: "messages addressed over a link that was down",
		Value: always(func(s *run.Summary) float64 { return traffic(s, func(_, _, d int64) int64 { return d }) })},
}

func estimate(f func(e *run.EstimateError) float64) func(s *run.Summary) (float64, bool) {
	return func(s *run.Summary) (float64, bool) {
		if s.Estimates == nil {
			return 0, false
		}
		return f(s.Estimates), true
	}
}

// LookupMetric finds a metric by name.
func LookupMetric(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// ParseMetrics reads a comma-separated list of metric names; perRound
// requires metrics that have a per-round curve.
func ParseMetrics(list string, perRound bool) ([]Metric, error) {
	var out []Metric
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		m, ok := LookupMetric(name)
		if !ok {
			return nil, fmt.Errorf("unknown metric %q (metrics: %s)", name, metricNames(false))
		}
		if perRound && m.PerRound == nil {
			return nil, fmt.Errorf("metric %q is a whole-run number with no per-round curve (curves: %s)", name, metricNames(true))
		}
		out = append(out, m)
	}
	return out, nil
}

func metricNames(perRound bool) string {
	var names []string
	for _, m := range Metrics {
		if !perRound || m.PerRound != nil {
			names = append(names, m.Name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// MetricsHelp is the metric list for --help texts.
func MetricsHelp() string {
	var b strings.Builder
	for _, m := range Metrics {
		fmt.Fprintf(&b, "  %-26s %s\n", m.Name, m.Doc)
	}
	return b.String()
}
