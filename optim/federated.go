package optim

import (
	"fmt"
	"hgpsim/datasets"
	"math"
)

// FederatedTraining holds the training parameters of the server-based
// algorithms whose clients take local SGD steps between communication
// rounds. A family embeds it with `yaml:",inline"`, so its keys stand
// beside the family's own in a scenario; the paper defaults stay with each
// algorithm's constructor.
type FederatedTraining struct {
	Rounds        int     `yaml:"rounds" doc:"communication rounds (outer iterations) R, 1 … 10⁷"`
	Participation float64 `yaml:"participation" doc:"fraction C of the m clients the server samples per communication round, in (0, 1]; at least one"`
	LocalSteps    int     `yaml:"local_steps" doc:"local SGD steps τ per communication round, 1 … 10⁶"`
	LR            float64 `yaml:"lr" doc:"local step size γ, finite, > 0"`
	Batch         int     `yaml:"batch" doc:"local minibatch size, 0 … 1048576 (0: full batch)"`
	EvalEvery     int     `yaml:"eval_every" doc:"evaluate the global model on the server's test data every k communication rounds and after the last, >= 0 (0: only after the last)"`
}

// Server reports that node 0 is the server (the promoted method
// implements Algorithm's).
func (*FederatedTraining) Server() bool { return true }

// Validate checks the parameters for n nodes, the server included.
func (t *FederatedTraining) Validate(n int) error {
	switch {
	case t.Rounds < 1 || t.Rounds > 10_000_000:
		return fmt.Errorf("rounds must be in [1, 10⁷], got %d", t.Rounds)
	case t.LocalSteps < 1 || t.LocalSteps > 1_000_000:
		return fmt.Errorf("local_steps must be in [1, 10⁶], got %d", t.LocalSteps)
	case !(t.LR > 0) || math.IsInf(t.LR, 0):
		return fmt.Errorf("lr must be a finite number > 0, got %v", t.LR)
	case t.EvalEvery < 0:
		return fmt.Errorf("eval_every must be >= 0, got %d", t.EvalEvery)
	}
	return ValidateServer(t.Participation, t.Batch, n)
}

// Evaluate returns the rows of d and the loss and accuracy eval gives on
// it, or zeros when d is nil or empty, for the split's fields of Stats (a
// split without rows is left out of the means across clients).
func Evaluate(d *datasets.Dataset, eval func(d *datasets.Dataset) (loss, acc float64)) (n int, loss, acc float64) {
	if d == nil || d.N == 0 {
		return 0, 0, 0
	}
	loss, acc = eval(d)
	return d.N, loss, acc
}
