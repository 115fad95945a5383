package scenarios

import (
	"math"

	"hgpsim/datasets"
	"hgpsim/models"
)

// The rates of the work model for a CNN on one core, in flops per second
// counted as hgpsim bench --phase nets counts them (a forward pass per
// example, three per gradient, eight per Hessian-vector product):
// FedEM's CNN on an AMD EPYC (Zen 5) at batch 128 runs its gradient at
// 74 GFLOP/s and its products at 87; the evaluations' forward passes (in
// chunks of 64 rows) at about 70, fitted to short runs of
// scenarios/paper/personalization-cnn-stod.yaml (docs/scale.md). A core
// at half the speed (docs/performance.md's Intel Xeon runs the same
// products at 38–45) takes twice the time.
const (
	cnnGradRate    = 74e9
	cnnProductRate = 87e9
	cnnForwardRate = 70e9
	// denseRate is the dense models' (softmax, logistic, MLP), fitted to
	// scenarios/paper/personalization-stod.yaml (softmax, n = 20).
	denseRate = 55e9

	// In float32 FedEM's CNN runs its gradient 2.1 times and its products
	// 2.14 times as fast (29.8 against 62.8 ms and 65.9 against 141.3 ms,
	// docs/performance.md, Zen 5), and mixing moves half the bytes. The
	// dense models gain little (their batches are small) and keep their
	// rate.
	cnnGradRate32    = 2.1 * cnnGradRate
	cnnProductRate32 = 2.14 * cnnProductRate
	cnnForwardRate32 = 2.1 * cnnForwardRate

	// touchCost is the system time of first touching a byte: the n = 100
	// float32 CNN run of docs/scale.md spent 41 s of it on its 18.5 GiB.
	touchCost = 41.0 / (18.5 * (1 << 30))
)

// work returns the floating-point work of a PDBO run and its time on one
// core. fwd is one example's forward pass over every ensemble member, dx
// the parameters, examples what the data source loads and links the
// network's links up in a round (expected), with self-loops.
func work(sc Scenario, fwd, dx, examples, links float64) (flops, seconds float64) {
	n := float64(sc.Nodes())
	steps := float64(sc.Outer.Steps)
	sgpPhases, hyperPhases := steps+1, math.Max(steps, 1)
	evals := 1.0
	if sc.SGP.EvalEvery > 0 {
		evals += float64(sc.SGP.Rounds / sc.SGP.EvalEvery)
	}
	hyperRounds, products := 0.0, 1.0
	if sc.Hypergradient.Estimator != "none" {
		hyperRounds = float64(sc.Hypergradient.M)
		if sc.Hypergradient.Sampling == "alternate" {
			hyperRounds *= 2
		}
		if sc.Hypergradient.Estimator == "vr-hgp" {
			products = 2 // of u and of w
		}
	}
	// Mixing costs 2·d_x per link and vector mixed.
	mix := 2 * dx * links * (sgpPhases*float64(sc.SGP.Rounds) + hyperPhases*hyperRounds*products)
	clip := func(batch int, per float64) float64 {
		if b := float64(batch); b > 0 && b <= per {
			return b
		}
		return per
	}
	// The clients' gradients and products at their rates; an evaluation
	// passes twice over each of a client's splits (loss and accuracy) and
	// takes the outer gradient on its outer data, as does the
	// linearization that starts each hyper-gradient phase. A gradient
	// costs three forward passes for a CNN (its input gradients) and two
	// for the dense models, a Hessian-vector plus cross product eight and
	// four.
	gradCost, prodCost := 2.0, 4.0
	gradRate, prodRate, fwdRate := denseRate, denseRate, denseRate
	if _, ok := sc.Model.Arch.Params.(models.Coster); ok {
		gradCost, prodCost = 3, 8
		gradRate, prodRate, fwdRate = cnnGradRate, cnnProductRate, cnnForwardRate
		if sc.Float32() {
			gradRate, prodRate, fwdRate = cnnGradRate32, cnnProductRate32, cnnForwardRate32
		}
	}
	mixRate := float64(AssumedFlops)
	if sc.Float32() {
		mixRate *= 2
	}
	train, val, test := examples, 0.0, 0.0
	if s, ok := sc.Data.Source.Params.(interface {
		Splits(clients int) (train, val, test int64)
	}); ok {
		tr, va, te := s.Splits(sc.Nodes())
		train, val, test = float64(tr), float64(va), float64(te)
	}
	outer := train
	if sc.Hypergradient.OuterData == "val" {
		outer = val
	}
	grads := sgpPhases * float64(sc.SGP.Rounds) * n * clip(sc.SGP.Batch, train/n)
	forwards := sgpPhases * evals * 2 * (train + val + test)
	if sc.Hypergradient.Estimator != "none" {
		grads += (sgpPhases*evals + hyperPhases) * outer
	}
	prods := hyperPhases * hyperRounds * products * n * clip(sc.Hypergradient.Batch, train/n)
	flops = grads*gradCost*fwd + prods*prodCost*fwd + forwards*fwd + mix
	seconds = grads*gradCost*fwd/gradRate + prods*prodCost*fwd/prodRate + forwards*fwd/fwdRate + mix/mixRate
	if sc.Hypergradient.Oracle {
		m := n * dx
		flops += m * m * m
		seconds += m * m * m / denseRate
	}
	return flops, seconds
}

// keptData lowers the data part of a process's live heap where the
// source keeps a fraction of what it loads (datasets.IDXData): the files
// are held whole only while they are split, before the clients exist, so
// the live heap is the larger of the files and the rest with the examples
// kept.
func keptData(sc Scenario, live []ResourcePart, features int) []ResourcePart {
	s, ok := sc.Data.Source.Params.(interface {
		Splits(clients int) (train, val, test int64)
	})
	if !ok {
		return live
	}
	tr, va, te := s.Splits(sc.Nodes())
	kept := float64(tr+va+te) * float64(datasets.ExampleBytes(sc.Data.Source.Params, features))
	var rest float64
	at := -1
	for k, p := range live {
		if p.Name == "data" {
			at = k
		} else {
			rest += float64(p.Bytes)
		}
	}
	if at >= 0 {
		live[at].Bytes = int64(math.Max(kept, float64(live[at].Bytes)-rest))
	}
	return live
}
