package nodeweights

import (
	"fmt"
	"slices"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
	"hgpsim/optim/fed"
)

func init() {
	optim.Algorithms.Register("local-train",
		"Local training, the weighted-nodes paper's baseline: the center (node 0) runs SVRG on its D^valid alone (min L̂₀); the nodes take no part and nothing is sent. Per outer iteration it takes as many local steps as a node of local-svrg (syncs × tau), in one runtime round.",
		func() optim.Algorithm {
			return &LocalTrain{Baseline: fed.Baseline{WeightedCommon: fed.DefaultWeightedCommon()}, SVRGParam: SVRGParam{Q: 0.02}}
		})
}

// LocalTrain is SVRG at the center on its validation data.
type LocalTrain struct {
	fed.Baseline `yaml:",inline"`
	SVRGParam    `yaml:",inline"`
}

// Validate implements Algorithm.
func (a *LocalTrain) Validate(n int) error {
	if err := a.Baseline.Validate(n); err != nil {
		return err
	}
	return a.SVRGParam.validate()
}

// Plan implements Algorithm.
func (a *LocalTrain) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	ntrain, err := fed.MinTrain(s)
	if err != nil {
		return nil, nil, err
	}
	steps := a.PerOuter(ntrain) * a.Tau
	factory := func(i int) (optim.Client, error) {
		if i != 0 {
			return &stepClient{idle{}}, nil
		}
		model, data := s.Model.Clone(), s.Data[0]
		sv := newSVRG(len(s.X0), a.LR, a.Q, optim.NewBatcher(data.Val.N, a.Batch, rng.NewStream(s.Seed, 0, rng.PurposeBatch)),
			rng.NewStream(s.Seed, 0, rng.PurposeCoin))
		sv.reset(&lossSum{model: model, data: data.Val, tmp: make([]float64, len(s.X0))}, slices.Clone(s.X0))
		return &stepClient{&localCenter{sv: sv, steps: steps, model: model, data: data}}, nil
	}
	return factory, fed.OuterPhases("local-train", a.Outer, 1), nil
}

type localCenter struct {
	sv    *svrg
	steps int
	model models.Bilevel[float64]
	data  datasets.ClientData
}

func (*localCenter) enter(int)                                   {}
func (c *localCenter) Send(*optim.Round, optim.Outbox) error     { return c.sv.steps(c.steps) }
func (*localCenter) Receive(*optim.Round, []optim.Message) error { return nil }

// localCenterState is the center's Local-SVRG state (its problem, data
// and step never change).
type localCenterState struct{ SVRG svrgState }

// SaveState implements Stateful.
func (c *localCenter) SaveState() ([]byte, error) {
	sv, err := c.sv.save(c.sv.f)
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(localCenterState{sv})
}

// LoadState implements Stateful.
func (c *localCenter) LoadState(b []byte) error {
	var st localCenterState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	if st.SVRG.F != 1 {
		return fmt.Errorf("local-train: a saved state without the center's problem")
	}
	return c.sv.load(st.SVRG, c.sv.f)
}

// Observe implements Observer.
func (c *localCenter) Observe() optim.Stats { return fed.ServerStats(c.model, c.sv.x, c.data) }
