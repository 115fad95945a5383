package optim

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"

	"hgpsim/internal/rng"
	"hgpsim/models"
)

func init() {
	Algorithms.Register("fedavg",
		"Federated averaging with a server (McMahan et al.): node 0 is the server, the hub of a star; each communication round it samples participation·m clients from its own stream and sends them the global model, they take local_steps SGD steps on their training data and upload, and the server averages the uploads that arrived (a dropped upload is simply missing; with none the model stays). Two runtime rounds per communication round (down, up).",
		func() Algorithm {
			return &FedAvg{Rounds: 100, Participation: 0.1, LocalSteps: 1, LR: 0.1, Batch: 32, EvalEvery: 10}
		})
}

// FedAvg is federated averaging over a star whose hub is the server.
type FedAvg struct {
	Rounds        int     `yaml:"rounds" doc:"communication rounds R, 1 … 10⁷ (each takes two runtime rounds: down and up)"`
	Participation float64 `yaml:"participation" doc:"fraction C of the m clients the server samples per round, in (0, 1]; at least one"`
	LocalSteps    int     `yaml:"local_steps" doc:"local SGD steps τ per round, 1 … 10⁶"`
	LR            float64 `yaml:"lr" doc:"local step size, finite, > 0"`
	Batch         int     `yaml:"batch" doc:"local minibatch size, 0 … 1048576 (0: full batch)"`
	EvalEvery     int     `yaml:"eval_every" doc:"evaluate the global model every k communication rounds and after the last (0: only after the last)"`
}

// Server implements Algorithm.
func (*FedAvg) Server() bool { return true }

// Validate implements Algorithm.
func (f *FedAvg) Validate(n int) error {
	switch {
	case f.Rounds < 1 || f.Rounds > 10_000_000:
		return fmt.Errorf("rounds must be in [1, 10⁷], got %d", f.Rounds)
	case !(f.Participation > 0 && f.Participation <= 1):
		return fmt.Errorf("participation must be in (0, 1], got %v", f.Participation)
	case f.LocalSteps < 1 || f.LocalSteps > 1_000_000:
		return fmt.Errorf("local_steps must be in [1, 10⁶], got %d", f.LocalSteps)
	case !(f.LR > 0) || math.IsInf(f.LR, 0):
		return fmt.Errorf("lr must be a finite number > 0, got %v", f.LR)
	case f.Batch < 0 || f.Batch > 1<<20:
		return fmt.Errorf("batch must be in [0, 1048576], got %d", f.Batch)
	case f.EvalEvery < 0:
		return fmt.Errorf("eval_every must be >= 0, got %d", f.EvalEvery)
	case n < 2:
		return fmt.Errorf("fedavg needs a server and at least one client")
	}
	return nil
}

// Plan implements Algorithm: node 0 is the server, the others clients; one
// phase of 2R runtime rounds.
func (f *FedAvg) Plan(s *Setup) (ClientFactory, Program, error) {
	m := s.Net.N - 1
	sample := max(1, int(math.Round(f.Participation*float64(m))))
	factory := func(i int) (Client, error) {
		if i == 0 {
			return &Fixed{&fedAvgServer{x: append([]float64(nil), s.X0...), m: m, sample: sample,
				r: rng.NewStream(s.Seed, 0, rng.PurposeSample), model: s.Model.Clone(), test: s.Test}}, nil
		}
		return &Fixed{&fedAvgClient{id: i, f: f, model: s.Model.Clone(), data: s.Data[i],
			x: make([]float64, len(s.X0)), grad: make([]float64, len(s.X0)),
			batch: NewBatcher(s.Data[i].Train.N, f.Batch, rng.NewStream(s.Seed, i, rng.PurposeBatch))}}, nil
	}
	eval := 0
	if f.EvalEvery > 0 {
		eval = 2 * f.EvalEvery
	}
	// One phase, cut at its evaluations so that the run can be
	// checkpointed between them.
	phases := Phases(SplitPhase(PhaseSpec{Name: "fedavg", Rounds: 2 * f.Rounds, EvalEvery: eval, Tick: Continue}, 1))
	return factory, &phases, nil
}

// fedAvgServer is node 0: it samples, broadcasts and averages.
type fedAvgServer struct {
	x         []float64 // the global model
	out       [2][]float64
	flip      int
	m, sample int
	r         *rng.Stream
	chosen    []int
	model     models.Bilevel
	test      *models.Dataset
}

func (s *fedAvgServer) Send(r *Round, out Outbox) error {
	if r.Index%2 == 1 {
		return nil // the clients' round
	}
	// Sample without replacement from the server's own stream, in
	// ascending order so that the messages leave in a fixed order.
	perm := s.r.Perm(s.m)[:s.sample]
	s.chosen = s.chosen[:0]
	for _, p := range perm {
		s.chosen = append(s.chosen, p+1)
	}
	slices.Sort(s.chosen)
	s.flip ^= 1
	s.out[s.flip] = append(s.out[s.flip][:0], s.x...)
	Send(out, s.chosen, Payload{Kind: KindModel, Vec: s.out[s.flip]})
	return nil
}

func (s *fedAvgServer) Receive(r *Round, in []Message) error {
	if r.Index%2 == 0 {
		return nil
	}
	got := 0
	for _, m := range in {
		if m.From != 0 && m.Kind == KindModel {
			if got == 0 {
				copy(s.x, m.Vec)
			} else {
				floats.Add(s.x, m.Vec)
			}
			got++
		}
	}
	if got > 0 {
		floats.Scale(1/float64(got), s.x)
	}
	if !AllFinite(s.x) {
		return ErrNonFinite
	}
	return nil
}

// Observe implements Observer: the global model on the pooled test data.
func (s *fedAvgServer) Observe() Stats {
	st := Stats{X: s.x}
	if s.test != nil && s.test.N > 0 {
		st.TestN = s.test.N
		st.TestLoss = s.model.InnerLoss(s.x, nil, s.test, nil)
		st.TestAcc = s.model.Accuracy(s.x, nil, s.test, nil)
	}
	return st
}

// fedAvgClient trains the model it receives and uploads it.
type fedAvgClient struct {
	id      int
	f       *FedAvg
	model   models.Bilevel
	data    models.ClientData
	x, grad []float64
	out     [2][]float64
	flip    int
	picked  bool
	batch   *Batcher
}

func (c *fedAvgClient) Receive(r *Round, in []Message) error {
	if r.Index%2 == 1 {
		return nil
	}
	for _, m := range in {
		if m.From == 0 && m.Kind == KindModel {
			copy(c.x, m.Vec)
			c.picked = true
		}
	}
	return nil
}

func (c *fedAvgClient) Send(r *Round, out Outbox) error {
	if r.Index%2 == 0 || !c.picked {
		return nil
	}
	c.picked = false
	for range c.f.LocalSteps {
		loss := c.model.InnerGrad(c.grad, c.x, nil, c.data.Train, c.batch.Next())
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("%w: the local training loss is %v (lower lr)", ErrNonFinite, loss)
		}
		floats.AddScaled(c.x, -c.f.LR, c.grad)
	}
	c.flip ^= 1
	c.out[c.flip] = append(c.out[c.flip][:0], c.x...)
	Send(out, []int{0}, Payload{Kind: KindModel, Vec: c.out[c.flip]})
	return nil
}

// Checkpoints. The run is one long phase cut at evaluated rounds, so the
// state is what lives across rounds: the server's global model, its
// sampling stream and its last sample; a client's model (received but not
// yet trained on, when the cut falls between the down and the up round),
// whether it was picked, and its minibatch position. Send buffers are
// scratch: no message is in flight at a cut.

// fedAvgServerState is what a fedAvgServer carries across rounds.
type fedAvgServerState struct {
	Kind   string // "fedavg-server", checked on load
	X      []float64
	RNG    []byte // the sampling stream
	Chosen []int  // the last sample
}

// SaveState implements Stateful.
func (s *fedAvgServer) SaveState() ([]byte, error) {
	r, err := s.r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return EncodeState(fedAvgServerState{Kind: "fedavg-server", X: s.x, RNG: r, Chosen: s.chosen})
}

// LoadState implements Stateful.
func (s *fedAvgServer) LoadState(b []byte) error {
	var st fedAvgServerState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	if st.Kind != "fedavg-server" {
		return fmt.Errorf("fedavg server: a saved state of a %q", st.Kind)
	}
	if err := CheckLens("fedavg server", map[string][2]int{"x": {len(st.X), len(s.x)}}, nil); err != nil {
		return err
	}
	if err := checkSample("fedavg server", st.Chosen, s.m, s.sample); err != nil {
		return err
	}
	if err := s.r.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("fedavg server: sampling stream: %w", err)
	}
	copy(s.x, st.X)
	s.chosen = append(s.chosen[:0], st.Chosen...)
	return nil
}

// checkSample returns an error unless chosen is a sample of at most k of
// the clients 1 … m, ascending and without repeats.
func checkSample(who string, chosen []int, m, k int) error {
	if len(chosen) > k {
		return fmt.Errorf("%s: a saved sample of %d clients, the run samples %d", who, len(chosen), k)
	}
	for n, c := range chosen {
		if c < 1 || c > m {
			return fmt.Errorf("%s: a saved sample holds client %d, the run has clients 1 … %d", who, c, m)
		}
		if n > 0 && c <= chosen[n-1] {
			return fmt.Errorf("%s: a saved sample that is not ascending", who)
		}
	}
	return nil
}

// fedAvgClientState is what a fedAvgClient carries across rounds.
type fedAvgClientState struct {
	Kind   string // "fedavg-client", checked on load
	ID     int
	X      []float64
	Picked bool
	Batch  BatcherState
}

// SaveState implements Stateful.
func (c *fedAvgClient) SaveState() ([]byte, error) {
	bs, err := c.batch.save()
	if err != nil {
		return nil, err
	}
	return EncodeState(fedAvgClientState{Kind: "fedavg-client", ID: c.id, X: c.x, Picked: c.picked, Batch: bs})
}

// LoadState implements Stateful.
func (c *fedAvgClient) LoadState(b []byte) error {
	var st fedAvgClientState
	if err := DecodeState(b, &st); err != nil {
		return err
	}
	who := fmt.Sprintf("fedavg client %d", c.id)
	if st.Kind != "fedavg-client" {
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	}
	if st.ID != c.id {
		return fmt.Errorf("%s: a saved state of client %d", who, st.ID)
	}
	if err := CheckLens(who, map[string][2]int{"x": {len(st.X), len(c.x)}}, nil); err != nil {
		return err
	}
	if !IsPerm(st.Batch.Perm) {
		return fmt.Errorf("%s: the saved minibatch order is not a permutation", who)
	}
	if err := c.batch.load(st.Batch); err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	copy(c.x, st.X)
	c.picked = st.Picked
	return nil
}
