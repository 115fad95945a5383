package fed

import (
	"fmt"

	"hgpsim/internal/rng"
	"hgpsim/optim"
)

// Strategy is the server side of a federated algorithm.
type Strategy interface {
	// Configure is called in every down round: it returns the clients to
	// send the global model to, ascending, and the model, which the
	// server copies before sending.
	Configure(r *optim.Round) (to []int, global []float64, err error)
	// Aggregate is called in every up round with the model uploads that
	// arrived, sorted by sender; a lost upload is simply missing. The
	// messages are valid for the call.
	Aggregate(r *optim.Round, uploads []optim.Message) error
}

// Trainer is a client side of a federated algorithm.
type Trainer interface {
	// Start takes the global model the server sent (valid for the call).
	Start(global []float64) error
	// Train runs the local update and returns the vector to upload, which
	// the client copies before sending.
	Train() (upload []float64, err error)
}

// Server is node 0: it runs a Strategy as an optim.Behaviour. It observes,
// reports and saves what its strategy does, when the strategy implements
// optim.Observer, optim.Resulter and optim.Stateful.
type Server struct {
	Strategy Strategy
	uploads  []optim.Message
	buf      optim.SendBuffers
}

// Send implements optim.Behaviour.
func (s *Server) Send(r *optim.Round, out optim.Outbox) error {
	if !r.Down() {
		return nil
	}
	to, x, err := s.Strategy.Configure(r)
	if err != nil {
		return err
	}
	optim.Send(out, to, optim.Payload{Kind: optim.KindModel, Vec: s.buf.Fill(x)})
	return nil
}

// Receive implements optim.Behaviour.
func (s *Server) Receive(r *optim.Round, in []optim.Message) error {
	if r.Down() {
		return nil
	}
	s.uploads = s.uploads[:0]
	for _, m := range in {
		if m.From != 0 && m.Kind == optim.KindModel {
			s.uploads = append(s.uploads, m)
		}
	}
	err := s.Strategy.Aggregate(r, s.uploads)
	clear(s.uploads) // no payload outlives its round here
	return err
}

// Observe implements optim.Observer.
func (s *Server) Observe() optim.Stats { return observe(s.Strategy) }

// Result implements optim.Resulter.
func (s *Server) Result() optim.Result { return result(s.Strategy) }

// SaveState implements optim.Stateful: the strategy's state (the send
// buffers are scratch: nothing is in flight between rounds).
func (s *Server) SaveState() ([]byte, error) {
	st, ok := s.Strategy.(optim.Stateful)
	if !ok {
		return nil, fmt.Errorf("a %T server cannot save its state", s.Strategy)
	}
	return st.SaveState()
}

// LoadState implements optim.Stateful.
func (s *Server) LoadState(b []byte) error {
	st, ok := s.Strategy.(optim.Stateful)
	if !ok {
		return fmt.Errorf("a %T server cannot load a saved state", s.Strategy)
	}
	return st.LoadState(b)
}

// Policy says when a client trains on a broadcast it received.
type Policy int

// Policies.
const (
	// UntilUp: at the first up round the client takes part in after the
	// broadcast arrived (FedAvg).
	UntilUp Policy = iota
	// ThisRound: only at the up round right after the down round in which
	// it arrived; a down round without one cancels it.
	ThisRound
	// Sticky: once a broadcast arrived, at every up round, from the
	// client's own model when a later broadcast is lost (Local-SVRG).
	Sticky
)

// Client is node i ≥ 1: it runs a Trainer as an optim.Behaviour.
type Client struct {
	Trainer Trainer
	Policy  Policy
	// Oldest takes the first of the server's broadcasts that reach the
	// client in a down round (the oldest, when some arrive late) instead
	// of the newest.
	Oldest bool
	picked bool
	buf    optim.SendBuffers
	server [1]int
}

// Receive implements optim.Behaviour.
func (c *Client) Receive(r *optim.Round, in []optim.Message) error {
	if !r.Down() {
		return nil
	}
	var got []float64
	for _, m := range in {
		if m.From == 0 && m.Kind == optim.KindModel {
			got = m.Vec
			if c.Oldest {
				break
			}
		}
	}
	if got == nil {
		if c.Policy == ThisRound {
			c.picked = false
		}
		return nil
	}
	c.picked = true
	return c.Trainer.Start(got)
}

// Send implements optim.Behaviour.
func (c *Client) Send(r *optim.Round, out optim.Outbox) error {
	if r.Down() || !c.picked {
		return nil
	}
	if c.Policy != Sticky {
		c.picked = false
	}
	up, err := c.Trainer.Train()
	if err != nil {
		return err
	}
	optim.Send(out, c.server[:], optim.Payload{Kind: optim.KindModel, Vec: c.buf.Fill(up)})
	return nil
}

// Reinit implements optim.Reinitializer: a client that lost its state
// holds no broadcast and trains again once the server's next broadcast
// reaches it, from that global model (what a trainer keeps beyond it, such
// as Ditto's personal model, restarts too when the trainer implements
// Reinit() error).
func (c *Client) Reinit(*optim.PhaseSpec, *optim.Round) (optim.Behaviour, error) {
	c.picked = false
	if r, ok := c.Trainer.(interface{ Reinit() error }); ok {
		if err := r.Reinit(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Observe implements optim.Observer.
func (c *Client) Observe() optim.Stats { return observe(c.Trainer) }

// Result implements optim.Resulter.
func (c *Client) Result() optim.Result { return result(c.Trainer) }

// clientState is what a Client carries across rounds: whether it holds a
// broadcast to train on, and its trainer's state.
type clientState struct {
	Picked  bool
	Trainer []byte
}

// SaveState implements optim.Stateful.
func (c *Client) SaveState() ([]byte, error) {
	st, ok := c.Trainer.(optim.Stateful)
	if !ok {
		return nil, fmt.Errorf("a %T client cannot save its state", c.Trainer)
	}
	b, err := st.SaveState()
	if err != nil {
		return nil, err
	}
	return optim.EncodeState(clientState{Picked: c.picked, Trainer: b})
}

// LoadState implements optim.Stateful.
func (c *Client) LoadState(b []byte) error {
	st, ok := c.Trainer.(optim.Stateful)
	if !ok {
		return fmt.Errorf("a %T client cannot load a saved state", c.Trainer)
	}
	var cs clientState
	if err := optim.DecodeState(b, &cs); err != nil {
		return err
	}
	if err := st.LoadState(cs.Trainer); err != nil {
		return err
	}
	c.picked = cs.Picked
	return nil
}

func observe(v any) optim.Stats {
	if o, ok := v.(optim.Observer); ok {
		return o.Observe()
	}
	return optim.Stats{}
}

func result(v any) optim.Result {
	if r, ok := v.(optim.Resulter); ok {
		return r.Result()
	}
	return optim.Result{}
}

// Sampler draws the clients of a communication round: a fixed number of
// clients 1 … m without replacement, ascending, from the server's own
// stream.
type Sampler struct {
	m, k   int
	r      *rng.Stream
	chosen []int
}

// NewSampler returns the sampler of a run with seed and m clients that
// takes a fraction participation of them (at least one).
func NewSampler(seed uint64, m int, participation float64) *Sampler {
	return &Sampler{m: m, k: optim.SampleSize(participation, m),
		r: rng.NewStream(seed, 0, rng.PurposeSample)}
}

// Draw returns the next sample, valid until the next call.
func (s *Sampler) Draw() []int {
	s.chosen = optim.SampleClients(s.r.Rand, s.m, s.k, s.chosen)
	return s.chosen
}

// SamplerState is a sampler's position: its stream and its last sample.
type SamplerState struct {
	RNG    []byte
	Chosen []int
}

// Save returns s's position.
func (s *Sampler) Save() (SamplerState, error) {
	r, err := s.r.MarshalBinary()
	return SamplerState{RNG: r, Chosen: s.chosen}, err
}

// check returns an error, naming who, unless st fits s.
func (s *Sampler) check(who string, st SamplerState) error {
	if err := optim.CheckSample(who, st.Chosen, s.m, s.k); err != nil {
		return err
	}
	if err := rng.NewStream(0, 0, 0).UnmarshalBinary(st.RNG); err != nil { // a scratch stream
		return fmt.Errorf("%s: sampling stream: %w", who, err)
	}
	return nil
}

// load restores a position Save returned after check accepted it.
func (s *Sampler) load(st SamplerState) error {
	if err := s.r.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("sampling stream: %w", err)
	}
	s.chosen = append(s.chosen[:0], st.Chosen...)
	return nil
}

// Sampled is the part of a strategy that samples the clients of every
// down round and sends them the global model X.
type Sampled struct {
	X       []float64
	Sampler *Sampler
}

// Configure implements Strategy.
func (g *Sampled) Configure(*optim.Round) ([]int, []float64, error) {
	return g.Sampler.Draw(), g.X, nil
}

// SampledState is a Sampled's state: the global model and the sampler's
// position.
type SampledState struct {
	X       []float64
	Sampler SamplerState
}

// Save returns g's state.
func (g *Sampled) Save() (SampledState, error) {
	sp, err := g.Sampler.Save()
	return SampledState{X: g.X, Sampler: sp}, err
}

// Load restores a state Save returned, naming who in its errors; it
// changes nothing when st does not fit.
func (g *Sampled) Load(who string, st SampledState) error {
	if err := optim.CheckLens(who, map[string][2]int{"x": {len(st.X), len(g.X)}}, nil); err != nil {
		return err
	}
	if err := g.Sampler.check(who, st.Sampler); err != nil {
		return err
	}
	copy(g.X, st.X)
	return g.Sampler.load(st.Sampler)
}

// TrainingPhases returns a training of rounds communication rounds
// (2·rounds runtime rounds) as one phase named name, evaluated every
// evalEvery communication rounds and after the last (0: only after the
// last), cut at its evaluations so that a run can be checkpointed between
// them.
func TrainingPhases(name string, rounds, evalEvery int) *optim.Phases {
	ps := optim.Phases(optim.SplitPhase(optim.PhaseSpec{Name: name, Rounds: 2 * rounds, EvalEvery: 2 * evalEvery, Tick: optim.Continue}, 1))
	return &ps
}

// Everyone returns the clients 1 … m.
func Everyone(m int) []int {
	out := make([]int, m)
	for i := range out {
		out[i] = i + 1
	}
	return out
}
