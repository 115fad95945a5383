package nodeweights

import (
	"slices"

	"hgpsim/optim"
	"hgpsim/optim/fed"
)

func init() {
	optim.Algorithms.Register("local-svrg",
		"FedAvg as the weighted-nodes paper runs it: Local-SVRG (Alg. 1) on Σ_k w_k L̂_k with the fixed weights w_k = 1/K; node 0, the center, averages every tau local steps and evaluates the global model on its D^valid and D^test. Two runtime rounds per averaging (down, up).",
		func() optim.Algorithm {
			return &LocalSVRG{Baseline: fed.Baseline{WeightedCommon: fed.DefaultWeightedCommon()}, SVRGParam: SVRGParam{Q: 0.02}}
		})
}

// LocalSVRG is federated averaging with Local-SVRG and uniform weights, on
// the federated skeleton: the center is a fed.Averaging strategy, a node a
// Local-SVRG trainer.
type LocalSVRG struct {
	fed.Baseline `yaml:",inline"`
	SVRGParam    `yaml:",inline"`
}

// Validate implements optim.Algorithm.
func (a *LocalSVRG) Validate(n int) error {
	if err := a.Baseline.Validate(n); err != nil {
		return err
	}
	return a.SVRGParam.validate()
}

// Plan implements optim.Algorithm.
func (a *LocalSVRG) Plan(s *optim.Setup) (optim.ClientFactory, optim.Program, error) {
	ntrain, err := fed.MinTrain(s)
	if err != nil {
		return nil, nil, err
	}
	k, syncs := s.Net.N-1, a.PerOuter(ntrain)
	factory := func(i int) (optim.Client, error) {
		if i == 0 {
			return &optim.Fixed{Behaviour: &fed.Server{Strategy: &fed.Averaging{W: fed.Uniform(k), X: slices.Clone(s.X0),
				Model: s.Model.Clone(), Data: s.Data[0], Rounds: 2 * syncs}}}, nil
		}
		model, data := s.Model.Clone(), s.Data[i].Train
		batch, coin := nodeStreams(s.Seed, i, data.N, a.Batch)
		sv := newSVRG(len(s.X0), a.LR, a.Q, batch, coin)
		loss := &lossSum{model: model, data: data, tmp: make([]float64, len(s.X0))}
		// A node keeps stepping from its own iterate when a broadcast is
		// lost (Alg. 1 averages whatever the center received).
		return &optim.Fixed{Behaviour: &fed.Client{Trainer: &svrgNode{tau: a.Tau, sv: sv, loss: loss},
			Policy: fed.Sticky, Oldest: true}}, nil
	}
	return factory, fed.OuterPhases("local-svrg", a.Outer, 2*syncs), nil
}

// svrgNode runs Local-SVRG on its loss: from the center's model, tau
// steps, then the upload.
type svrgNode struct {
	tau     int
	sv      *svrg
	loss    *lossSum
	started bool
}

// Start implements fed.Trainer: the first model starts the problem (its
// full gradient), later ones replace the iterate.
func (nd *svrgNode) Start(v []float64) error {
	if !nd.started {
		nd.sv.reset(nd.loss, v)
		nd.started = true
		return nil
	}
	copy(nd.sv.x, v)
	return nil
}

// Train implements fed.Trainer.
func (nd *svrgNode) Train() ([]float64, error) {
	if err := nd.sv.steps(nd.tau); err != nil {
		return nil, err
	}
	return nd.sv.x, nil
}

// svrgNodeState is a Local-SVRG node's state: its SVRG state and whether
// it has started (its problem and step never change).
type svrgNodeState struct {
	Started bool
	SVRG    svrgState
}

// SaveState implements optim.Stateful.
func (nd *svrgNode) SaveState() ([]byte, error) {
	sv, err := nd.sv.save(nd.loss)
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(svrgNodeState{Started: nd.started, SVRG: sv})
}

// LoadState implements optim.Stateful.
func (nd *svrgNode) LoadState(b []byte) error {
	var st svrgNodeState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	if err := nd.sv.load(st.SVRG, nd.loss); err != nil {
		return err
	}
	nd.started = st.Started
	return nil
}
