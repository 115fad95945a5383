package faults

import "hgpsim/optim"
import "fmt"

func init() {
	Faults.Register("straggler",
		"A client that reaches the others only every k-th round: in the rounds in between it keeps everything it would send to itself — a push keeps all of the push-sum mass (weight 1 to itself), so nothing is lost — and still receives.",
		func() Fault { return &Straggler{Every: 2} })
}

// Straggler sends to other clients only in rounds r with r mod Every = 0.
type Straggler struct {
	Every int `yaml:"every" doc:"the client reaches the others in one round out of every, >= 1 (1: always)"`
}

// Validate implements Fault.
func (s *Straggler) Validate() error {
	if s.Every < 1 {
		return fmt.Errorf("every must be >= 1 rounds, got %d", s.Every)
	}
	return nil
}

// Wrap implements Fault.
func (s *Straggler) Wrap(b optim.Behaviour, env optim.Env) optim.Behaviour {
	if b == nil || s.Every == 1 {
		return b
	}
	return &straggling{Wrapped: optim.Wrapped{Inner: b}, every: s.Every, out: stayHome{self: env.Self}}
}

type straggling struct {
	optim.Wrapped
	every int
	out   stayHome
}

func (s *straggling) Send(r *optim.Round, out optim.Outbox) error {
	if r.Index%s.every == 0 {
		return s.Inner.Send(r, out)
	}
	s.out.Outbox = out
	return s.Inner.Send(r, &s.out)
}

func (s *straggling) Receive(r *optim.Round, in []optim.Message) error { return s.Inner.Receive(r, in) }

// stayHome is an Outbox that delivers only the sender's messages to itself.
// Its push weights keep all the mass at home (1 to itself, 0 to the
// others): they are what is actually sent, so the sender's Alg. 2 counts
// stay true.
type stayHome struct {
	optim.Outbox
	self    int
	weights []float64
}

func (o *stayHome) Weights(to []int) []float64 {
	o.weights = o.weights[:0]
	for _, j := range to {
		w := 0.0
		if j == o.self {
			w = 1
		}
		o.weights = append(o.weights, w)
	}
	return o.weights
}

func (o *stayHome) Post(to int, weight float64, pushed bool, p optim.Payload) {
	if to == o.self {
		o.Outbox.Post(to, weight, pushed, p)
	}
}
