package experiments

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"hgpsim/report"
)

// WeightedNodesSummary is summary.json of the experiment.
type WeightedNodesSummary struct {
	Chosen  map[string]wnChoice   `json:"chosen"`
	Cells   map[string]wnCell     `json:"cells"` // "S1/minority/weighted-nodes"
	Claims  []string              `json:"claims"`
	Weights map[string][2]float64 `json:"minority_weight_first_last"` // "S1/minority": Σ minority weights at s = 0 and after the last step (seed mean)
	Table   string                `json:"-"`
	paper   *wnPaper              // the numbers table.md prints beside the measured ones
}

type wnCell struct {
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	Half  float64 `json:"half95,omitempty"` // 95 % Student-t half-width of the mean; absent for one seed
	N     int     `json:"n"`
	Paper float64 `json:"paper"`
}

func meanStd(v []float64) (float64, float64) {
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	var s float64
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	if len(v) > 1 {
		s /= float64(len(v) - 1)
	}
	return m, math.Sqrt(s)
}

func (e *WeightedNodesExp) summarize(paper *wnPaper, runs []*wnRun, choices map[string]wnChoice, minority int) *WeightedNodesSummary {
	sum := &WeightedNodesSummary{Chosen: choices, Cells: map[string]wnCell{}, Weights: map[string][2]float64{}, paper: paper}
	acc := map[string][]float64{}
	minW := map[string][][2]float64{}
	for _, r := range runs {
		_, t := r.best()
		key := fmt.Sprintf("S%d/%s/%s", r.Setting, r.Target, r.Method)
		acc[key] = append(acc[key], t)
		if len(r.W) > 0 {
			first, last := r.W[0], r.W[len(r.W)-1]
			var a, b float64
			for j := range min(minority, len(first)) { // nodes 1 … minority come first
				a += first[j]
				b += last[j]
			}
			k := fmt.Sprintf("S%d/%s", r.Setting, r.Target)
			minW[k] = append(minW[k], [2]float64{a, b})
		}
	}
	for k, v := range minW {
		var a, b float64
		for _, p := range v {
			a += p[0]
			b += p[1]
		}
		sum.Weights[k] = [2]float64{a / float64(len(v)), b / float64(len(v))}
	}
	var tb strings.Builder
	for _, target := range e.Targets {
		fmt.Fprintf(&tb, "\n**%s model** (test accuracy at the best validation accuracy, mean ± 95 %% half-width (Student t) over %d seeds; paper's F-MNIST CNN, mean ± its printed spread over 5 seeds, in brackets)\n\n", strings.ToUpper(target[:1])+target[1:], e.Seeds)
		tb.WriteString("| method |")
		for _, s := range e.Settings {
			fmt.Fprintf(&tb, " Setting %d |", s)
		}
		tb.WriteString("\n|---|")
		for range e.Settings {
			tb.WriteString("---|")
		}
		tb.WriteString("\n")
		for _, m := range e.Methods {
			fmt.Fprintf(&tb, "| %s |", paper.Labels[m])
			for _, s := range e.Settings {
				key := fmt.Sprintf("S%d/%s/%s", s, target, m)
				_, std := meanStd(acc[key])
				ci := report.MeanInterval(acc[key])
				ref := paper.Table3[target][m][s-1]
				cell := wnCell{Mean: ci.Mean, Std: std, N: ci.N, Paper: ref[0]}
				if ci.N > 1 {
					cell.Half = ci.Half
					fmt.Fprintf(&tb, " %.4f ± %.4f (%.4f ± %.4f) |", ci.Mean, ci.Half, ref[0], ref[1])
				} else {
					fmt.Fprintf(&tb, " %.4f (%.4f ± %.4f) |", ci.Mean, ref[0], ref[1])
				}
				sum.Cells[key] = cell
			}
			tb.WriteString("\n")
		}
	}
	sum.Table = tb.String()
	sum.Claims = e.claims(sum)
	return sum
}

// claims checks the paper's statements on the measured means.
func (e *WeightedNodesExp) claims(sum *WeightedNodesSummary) []string {
	var out []string
	has := func(m string) bool { return slices.Contains(e.Methods, m) }
	cell := func(s int, t, m string) float64 { return sum.Cells[fmt.Sprintf("S%d/%s/%s", s, t, m)].Mean }
	label := sum.paper.Labels
	if has("weighted-nodes") && len(e.Methods) > 1 {
		for _, t := range e.Targets {
			var best []string
			for _, s := range e.Settings {
				top := true
				for _, m := range e.Methods {
					if m != "weighted-nodes" && cell(s, t, m) > cell(s, t, "weighted-nodes") {
						top = false
					}
				}
				if top {
					best = append(best, fmt.Sprint(s))
				}
			}
			out = append(out, fmt.Sprintf("%s has the best mean (%s model) in %d of %d settings: [%s]", label["weighted-nodes"], t, len(best), len(e.Settings), strings.Join(best, " ")))
		}
	}
	if has("local-svrg") && has("local-train") {
		for _, t := range e.Targets {
			var below []string
			for _, s := range e.Settings {
				if s >= 2 && cell(s, t, "local-svrg") < cell(s, t, "local-train") {
					below = append(below, fmt.Sprint(s))
				}
			}
			out = append(out, fmt.Sprintf("%s below %s (%s model) in settings [%s] of 2–4", label["local-svrg"], label["local-train"], t, strings.Join(below, " ")))
		}
	}
	if has("weighted-nodes") && len(e.Settings) > 1 {
		for _, t := range e.Targets {
			spread := func(m string) float64 {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, s := range e.Settings {
					lo, hi = min(lo, cell(s, t, m)), max(hi, cell(s, t, m))
				}
				return hi - lo
			}
			line := fmt.Sprintf("spread over settings (%s model): %s %.4f", t, label["weighted-nodes"], spread("weighted-nodes"))
			for _, m := range e.Methods {
				if m != "weighted-nodes" {
					line += fmt.Sprintf(", %s %.4f", label[m], spread(m))
				}
			}
			out = append(out, line)
		}
	}
	keys := make([]string, 0, len(sum.Weights))
	for k := range sum.Weights {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := sum.Weights[k]
		out = append(out, fmt.Sprintf("%s: total weight of the minority nodes %.3f → %.3f", k, v[0], v[1]))
	}
	return out
}

func wnRunsCSV(runs []*wnRun) []byte {
	var b bytes.Buffer
	b.WriteString("setting,target,method,seed,best_val_acc,test_acc_at_best,final_test_acc,syncs,bytes\n")
	for _, r := range runs {
		v, t := r.best()
		fmt.Fprintf(&b, "%d,%s,%s,%d,%s,%s,%s,%s,%d\n", r.Setting, r.Target, r.Method, r.Seed, ftoa(v), ftoa(t),
			ftoa(r.Test[len(r.Test)-1]), ftoa(r.Syncs[len(r.Syncs)-1]), r.Bytes[len(r.Bytes)-1])
	}
	return b.Bytes()
}

func wnCurvesCSV(runs []*wnRun) []byte {
	var b bytes.Buffer
	b.WriteString("setting,target,method,seed,outer,syncs,bytes,val_acc,test_acc\n")
	for _, r := range runs {
		for i := range r.Val {
			fmt.Fprintf(&b, "%d,%s,%s,%d,%d,%s,%d,%s,%s\n", r.Setting, r.Target, r.Method, r.Seed, i, ftoa(r.Syncs[i]), r.Bytes[i], ftoa(r.Val[i]), ftoa(r.Test[i]))
		}
	}
	return b.Bytes()
}

func wnWeightsCSV(runs []*wnRun) []byte {
	var b bytes.Buffer
	b.WriteString("setting,target,seed,outer,node,weight\n")
	for _, r := range runs {
		for s, w := range r.W {
			for k, v := range w {
				fmt.Fprintf(&b, "%d,%s,%d,%d,%d,%s\n", r.Setting, r.Target, r.Seed, s, k+1, ftoa(v))
			}
		}
	}
	return b.Bytes()
}
