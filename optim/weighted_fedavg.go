package optim

import (
	"fmt"
	"slices"

	"hgpsim/models"
)

func init() {
	Algorithms.Register("local-svrg",
		"FedAvg as the weighted-nodes paper runs it: Local-SVRG (Alg. 1) on Σ_k w_k L̂_k with the fixed weights w_k = 1/K; node 0, the center, averages every tau local steps and evaluates the global model on its D^valid and D^test. Two runtime rounds per averaging (down, up).",
		func() Algorithm {
			return &LocalSVRG{WeightedCommon: defaultWeightedCommon(), SVRGParam: SVRGParam{Q: 0.02}}
		})
}

// LocalSVRG is federated averaging with Local-SVRG and uniform weights.
type LocalSVRG struct {
	WeightedCommon `yaml:",inline"`
	SVRGParam      `yaml:",inline"`
	Syncs          int `yaml:"syncs" doc:"averagings per outer iteration, 0 … 10⁶; 0 means those of one outer iteration of weighted-nodes (2⌈T_s/τ⌉ + 1)"`
}

// Server implements Algorithm.
func (*LocalSVRG) Server() bool { return true }

// Validate implements Algorithm.
func (a *LocalSVRG) Validate(n int) error {
	if err := a.WeightedCommon.validate(n); err != nil {
		return err
	}
	if err := validSyncs(a.Syncs); err != nil {
		return err
	}
	return a.SVRGParam.validate()
}

// Plan implements Algorithm.
func (a *LocalSVRG) Plan(s *Setup) (ClientFactory, Program, error) {
	ntrain, err := minTrain(s)
	if err != nil {
		return nil, nil, err
	}
	k, syncs := s.Net.N-1, a.baselineSyncs(a.Syncs, ntrain)
	w := make([]float64, k)
	for j := range w {
		w[j] = 1 / float64(k)
	}
	factory := func(i int) (Client, error) {
		if i == 0 {
			return &stepClient{&averagingCenter{k: k, w: w, x: slices.Clone(s.X0), model: s.Model.Clone(), data: s.Data[0], rounds: 2 * syncs}}, nil
		}
		model, data := s.Model.Clone(), s.Data[i].Train
		batch, coin := nodeStreams(s.Seed, i, data.N, a.Batch)
		sv := newSVRG(len(s.X0), a.LR, a.Q, batch, coin)
		loss := &lossSum{model: model, data: data, tmp: make([]float64, len(s.X0))}
		return &stepClient{&svrgNode{tau: a.Tau, sv: sv, loss: loss}}, nil
	}
	return factory, phasesOf("local-svrg", a.Outer, 2*syncs), nil
}

// averagingCenter broadcasts x in even rounds and sets it to the weighted
// average of the uploads in odd ones (FedAvg, Ditto's and pFedMe's global
// model); personal, when set, is the model it evaluates instead, updated
// by the hooks.
type averagingCenter struct {
	k, syncs int
	w, x     []float64
	model    models.Bilevel
	data     models.ClientData
	// onSend runs when the center broadcasts x; onAverage after it averaged
	// (last: the phase's last round).
	onSend    func() error
	onAverage func(last bool) error
	personal  []float64
	rounds    int
	// The hooks' state across phases: the minibatches of the personal
	// steps (Ditto) and the global model before the round (pFedMe).
	batch *Batcher
	prev  []float64
}

func (c *averagingCenter) enter(int) {}

func (c *averagingCenter) Send(r *Round, out Outbox) error {
	if r.Index%2 == 1 {
		return nil
	}
	sendCopy(out, nodeList(c.k), KindModel, c.x)
	if c.onSend != nil {
		return c.onSend()
	}
	return nil
}

func (c *averagingCenter) Receive(r *Round, in []Message) error {
	if r.Index%2 == 0 {
		return nil
	}
	c.syncs++
	if _, err := weightedAverage(c.x, c.w, in, KindModel); err != nil {
		return err
	}
	if c.onAverage != nil {
		return c.onAverage(r.Index == c.rounds-1)
	}
	return nil
}

// Observe implements Observer: the global model, or the center's personal
// one.
func (c *averagingCenter) Observe() Stats {
	if c.personal != nil {
		return centerStats(c.model, c.personal, c.data)
	}
	return centerStats(c.model, c.x, c.data)
}

// Result implements Resulter.
func (c *averagingCenter) Result() Result {
	return Result{Values: map[string]float64{"syncs": float64(c.syncs)}}
}

// svrgNode runs Local-SVRG on its loss: it takes the center's model,
// tau steps, and uploads.
type svrgNode struct {
	tau     int
	sv      *svrg
	loss    *lossSum
	started bool
}

func (*svrgNode) enter(int) {}

func (nd *svrgNode) Receive(r *Round, in []Message) error {
	if r.Index%2 == 1 {
		return nil
	}
	v := fromCenter(in, KindModel)
	switch {
	case v != nil && !nd.started:
		nd.sv.reset(nd.loss, v)
		nd.started = true
	case v != nil:
		copy(nd.sv.x, v)
	}
	return nil
}

func (nd *svrgNode) Send(r *Round, out Outbox) error {
	if r.Index%2 == 0 || !nd.started {
		return nil
	}
	if err := nd.sv.steps(nd.tau); err != nil {
		return err
	}
	sendCopy(out, []int{0}, KindModel, nd.sv.x)
	return nil
}

// averagingCenterState is what the center carries across outer steps: the
// global model, the personal one and its hooks' state, and the averagings
// so far. Its weights and data never change.
type averagingCenterState struct {
	Syncs             int
	X, Personal, Prev []float64
	Batch             *BatcherState
}

// SaveState implements Stateful.
func (c *averagingCenter) SaveState() ([]byte, error) {
	st := averagingCenterState{Syncs: c.syncs, X: c.x, Personal: c.personal, Prev: c.prev}
	if c.batch != nil {
		b, err := c.batch.save()
		if err != nil {
			return nil, err
		}
		st.Batch = &b
	}
	return EncodeState(st)
}

// LoadState implements Stateful.
func (c *averagingCenter) LoadState(b []byte) error {
	var st averagingCenterState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	if st.Syncs < 0 {
		return fmt.Errorf("a saved center with %d averagings", st.Syncs)
	}
	if (st.Batch != nil) != (c.batch != nil) {
		return fmt.Errorf("a saved center with minibatches %v for one with %v", st.Batch != nil, c.batch != nil)
	}
	slots := []vecSlot{{"global model", st.X, c.x}, {"personal model", st.Personal, c.personal}, {"previous global model", st.Prev, c.prev}}
	for _, v := range slots {
		if err := sameLen(v.name, v.saved, v.dst); err != nil {
			return err
		}
	}
	if c.batch != nil {
		if err := loadBatcher(c.batch, *st.Batch); err != nil {
			return err
		}
	}
	c.syncs = st.Syncs
	return loadVecs(slots...)
}

// svrgNodeState is a Local-SVRG node's state: its SVRG state and whether
// it has started (its problem and step never change).
type svrgNodeState struct {
	Started bool
	SVRG    svrgState
}

// SaveState implements Stateful.
func (nd *svrgNode) SaveState() ([]byte, error) {
	sv, err := nd.sv.save(nd.loss)
	if err != nil {
		return nil, err
	}
	return EncodeState(svrgNodeState{Started: nd.started, SVRG: sv})
}

// LoadState implements Stateful.
func (nd *svrgNode) LoadState(b []byte) error {
	var st svrgNodeState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	if err := nd.sv.load(st.SVRG, nd.loss); err != nil {
		return err
	}
	nd.started = st.Started
	return nil
}
