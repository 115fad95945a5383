package fed

import (
	"fmt"
	"slices"
	"testing"

	"hgpsim/optim"
)

// outbox records what a behaviour posts.
type outbox struct{ posts []optim.Payload }

func (o *outbox) Weights(to []int) []float64 { return make([]float64, len(to)) }
func (o *outbox) Post(_ int, _ float64, _ bool, p optim.Payload) {
	o.posts = append(o.posts, p)
}

// recorder is a Trainer that uploads the last model it started from.
type recorder struct {
	x      []float64
	trains int
}

func (r *recorder) Start(g []float64) error { r.x = slices.Clone(g); return nil }
func (r *recorder) Train() ([]float64, error) {
	r.trains++
	return r.x, nil
}

func broadcast(v ...float64) optim.Message {
	return optim.Message{From: 0, Payload: optim.Payload{Kind: optim.KindModel, Vec: v}}
}

// step drives a client through the rounds 0 … len(inboxes)−1, skipping
// the rounds marked offline, and returns what it uploaded in each up round.
func step(t *testing.T, c *Client, inboxes [][]optim.Message, offline map[int]bool) []string {
	t.Helper()
	var ups []string
	for i, in := range inboxes {
		if offline[i] {
			continue
		}
		r := &optim.Round{Index: i, Self: 1}
		out := &outbox{}
		if err := c.Send(r, out); err != nil {
			t.Fatal(err)
		}
		for _, p := range out.posts {
			ups = append(ups, fmt.Sprintf("%d:%v", i, p.Vec))
		}
		if err := c.Receive(r, in); err != nil {
			t.Fatal(err)
		}
	}
	return ups
}

// The policies: a broadcast in round 0, the client offline in round 1, no
// broadcast in round 2, then rounds 3 … 5 with a broadcast in round 4.
func TestClientPolicies(t *testing.T) {
	inboxes := [][]optim.Message{{broadcast(1)}, nil, nil, nil, {broadcast(2)}, nil}
	offline := map[int]bool{1: true}
	want := map[Policy][]string{
		UntilUp:   {"3:[1]", "5:[2]"}, // round 0's broadcast waits for the next up round
		ThisRound: {"5:[2]"},          // round 2 without a broadcast cancels it
		Sticky:    {"3:[1]", "5:[2]"},
	}
	for p, w := range want {
		got := step(t, &Client{Trainer: &recorder{}, Policy: p}, inboxes, offline)
		if !slices.Equal(got, w) {
			t.Errorf("policy %d: uploads %v, want %v", p, got, w)
		}
	}
	// Sticky trains at every up round once started, lost broadcasts or not.
	got := step(t, &Client{Trainer: &recorder{}, Policy: Sticky}, [][]optim.Message{{broadcast(1)}, nil, nil, nil, nil, nil}, nil)
	if w := []string{"1:[1]", "3:[1]", "5:[1]"}; !slices.Equal(got, w) {
		t.Errorf("sticky: uploads %v, want %v", got, w)
	}
	// Two broadcasts in one round (one of them late): newest or oldest.
	two := [][]optim.Message{{broadcast(1), broadcast(2)}, nil}
	if got := step(t, &Client{Trainer: &recorder{}}, two, nil); !slices.Equal(got, []string{"1:[2]"}) {
		t.Errorf("newest: %v", got)
	}
	if got := step(t, &Client{Trainer: &recorder{}, Oldest: true}, two, nil); !slices.Equal(got, []string{"1:[1]"}) {
		t.Errorf("oldest: %v", got)
	}
}

// aggregator records what reaches the strategy.
type aggregator struct {
	froms []int
}

func (a *aggregator) Configure(*optim.Round) ([]int, []float64, error) {
	return []int{1, 2}, []float64{7}, nil
}
func (a *aggregator) Aggregate(_ *optim.Round, ups []optim.Message) error {
	for _, m := range ups {
		a.froms = append(a.froms, m.From)
	}
	return nil
}

// The server sends only in down rounds and aggregates only the model
// uploads of clients in up rounds.
func TestServerRounds(t *testing.T) {
	a := &aggregator{}
	s := &Server{Strategy: a}
	in := []optim.Message{broadcast(1), {From: 1, Payload: optim.Payload{Kind: optim.KindModel}},
		{From: 2, Payload: optim.Payload{Kind: optim.KindUpdate}}, {From: 3, Payload: optim.Payload{Kind: optim.KindModel}}}
	for i := range 4 {
		out := &outbox{}
		r := &optim.Round{Index: i}
		if err := s.Send(r, out); err != nil {
			t.Fatal(err)
		}
		if want := 2 * (1 - i%2); len(out.posts) != want {
			t.Errorf("round %d: %d messages, want %d", i, len(out.posts), want)
		}
		if err := s.Receive(r, in); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{1, 3, 1, 3}; !slices.Equal(a.froms, want) {
		t.Errorf("aggregated uploads from %v, want %v", a.froms, want)
	}
}
