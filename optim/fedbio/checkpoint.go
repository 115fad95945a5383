package fedbio

import (
	"fmt"
	"slices"

	"hgpsim/internal/rng"
	"hgpsim/optim"
)

// Checkpoints. The run's main phase is cut at evaluated rounds, so the
// state is everything that lives across rounds, at whatever slot of an
// outer iteration the cut falls: the server's global model, ∇F of the
// current call, the iterate v, the sketch's server-side error, the last
// ω̂ (kept when no upload arrives), the two samples, the sampling stream
// and the upload counters; a client's λ (the preprocess filter's result
// included; the rows it trains on follow from λ), its model copy, v, the
// rows its Hessian-vector products of the current call use, its flags,
// its top-k error feedback and the positions of its minibatch and HVP-row
// streams. The sketch matrices are a pure function of the scenario's
// seed; send buffers, aggregates cleared before use (acc, agg, the
// non-iterative A and b) and per-call outputs (Hv, the directional
// derivatives, the sketched Hessian) are scratch.

// variant names a plan's λ mode and hyper-gradient, to refuse the state
// of another algorithm or variant.
func (p *plan) variant() string {
	var mode string
	switch p.mode {
	case lambdaLearned:
		mode = "comm-fedbio"
	case lambdaOracle:
		mode = "fedavg-oracle"
	case lambdaFilter:
		mode = "fedbio-preprocess"
	}
	switch {
	case p.hyper == nil:
		return mode + ", no hyper-gradient"
	case !p.hyper.iterative:
		return mode + ", non-iterative"
	}
	return mode + ", iterative, compressor " + p.hyper.compressor
}

// serverState is what a server carries across rounds. A
// vector the variant does not use is nil.
type serverState struct {
	Kind    string // "fedbio-server", checked on load
	Variant string // plan.variant, checked on load
	X       []float64
	GradF   []float64 // ∇F of the current call
	V       []float64 // the iterate (iterative)
	ErrTab  []float64 // the sketch's server-side error
	Omega   []float64 // the last ω̂ (non-iterative; nil before the first)
	Train   []int     // the last training sample
	Hyper   []int     // the sample of the current call
	RNG     []byte    // the sampling stream
	// The measured uploads.
	UpBytes, UpMsgs, HyperBytes, HyperMsgs int64
	HyperFloats                            int
}

// SaveState implements Stateful.
func (s *server) SaveState() ([]byte, error) {
	r, err := s.r.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := serverState{Kind: "fedbio-server", Variant: s.p.variant(), X: s.x, GradF: s.gradF, V: s.v,
		Omega: s.omega, Train: s.train, Hyper: s.hyper, RNG: r,
		UpBytes: s.upBytes, UpMsgs: s.upMsgs, HyperBytes: s.hyperBytes, HyperMsgs: s.hyperMsgs, HyperFloats: s.hyperFloats}
	if s.sketch != nil {
		st.ErrTab = s.sketch.errTab
	}
	return optim.EncodeState(st)
}

// LoadState implements Stateful.
func (s *server) LoadState(b []byte) error {
	var st serverState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	const who = "fedbio server"
	if st.Kind != "fedbio-server" {
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	}
	if v := s.p.variant(); st.Variant != v {
		return fmt.Errorf("%s: a saved state of %s for %s", who, st.Variant, v)
	}
	errTab, omega := 0, 0
	if s.sketch != nil {
		errTab = len(s.sketch.errTab)
	}
	if s.nonIter != nil {
		omega = s.h.r1
	}
	if err := optim.CheckLens(who, map[string][2]int{
		"x": {len(st.X), len(s.x)}, "∇F": {len(st.GradF), len(s.gradF)}, "v": {len(st.V), len(s.v)},
		"sketch error": {len(st.ErrTab), errTab}, "ω̂": {len(st.Omega), omega},
	}, map[string]bool{"ω̂": st.Omega == nil}); err != nil {
		return err
	}
	if err := optim.CheckSample(who+" (training)", st.Train, s.m, s.sample); err != nil {
		return err
	}
	if err := optim.CheckSample(who+" (hyper-gradient)", st.Hyper, s.m, s.sample); err != nil {
		return err
	}
	if st.UpBytes < 0 || st.UpMsgs < 0 || st.HyperBytes < 0 || st.HyperMsgs < 0 || st.HyperFloats < 0 {
		return fmt.Errorf("%s: negative saved upload counts", who)
	}
	if err := s.r.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("%s: sampling stream: %w", who, err)
	}
	copy(s.x, st.X)
	copy(s.gradF, st.GradF)
	copy(s.v, st.V)
	if s.sketch != nil {
		copy(s.sketch.errTab, st.ErrTab)
	}
	s.omega = slices.Clone(st.Omega)
	s.train = append(s.train[:0], st.Train...)
	s.hyper = append(s.hyper[:0], st.Hyper...)
	s.upBytes, s.upMsgs, s.hyperBytes, s.hyperMsgs = st.UpBytes, st.UpMsgs, st.HyperBytes, st.HyperMsgs
	s.hyperFloats = st.HyperFloats
	return nil
}

// clientState is what a client carries across rounds. A
// vector the variant does not use is nil.
type clientState struct {
	Kind    string // "fedbio-client", checked on load
	Variant string // plan.variant, checked on load
	ID      int
	Lambda  []float64
	X       []float64
	V       []float64 // the iterate of the current call (hyper-gradient)
	Hidx    []int     // the HVP rows of the current call (nil: all)
	Train   bool      // sampled for local training
	InCall  bool      // holds the state of the current call
	Batch   optim.BatcherState
	HyperR  []byte    // the HVP-row stream
	TopkErr []float64 // top-k error feedback of the current call
}

// SaveState implements Stateful.
func (c *client) SaveState() ([]byte, error) {
	bs, err := c.batch.Save()
	if err != nil {
		return nil, err
	}
	hr, err := c.hyperR.MarshalBinary()
	if err != nil {
		return nil, err
	}
	st := clientState{Kind: "fedbio-client", Variant: c.p.variant(), ID: c.id, Lambda: c.lambda, X: c.x,
		V: c.v, Hidx: c.hidx, Train: c.train, InCall: c.inCall, Batch: bs, HyperR: hr}
	if c.topk != nil {
		st.TopkErr = c.topk.fb.Error()
	}
	return optim.EncodeState(st)
}

// LoadState implements Stateful. It checks the whole state before it
// changes the client, so a refused state leaves the client as it was.
func (c *client) LoadState(b []byte) error {
	var st clientState
	if err := optim.DecodeState(b, &st); err != nil {
		return err
	}
	who := fmt.Sprintf("fedbio client %d", c.id)
	if st.Kind != "fedbio-client" {
		return fmt.Errorf("%s: a saved state of a %q", who, st.Kind)
	}
	if v := c.p.variant(); st.Variant != v {
		return fmt.Errorf("%s: a saved state of %s for %s", who, st.Variant, v)
	}
	if st.ID != c.id {
		return fmt.Errorf("%s: a saved state of client %d", who, st.ID)
	}
	topk := 0
	if c.topk != nil {
		topk = len(c.x)
	}
	if err := optim.CheckLens(who, map[string][2]int{
		"λ": {len(st.Lambda), len(c.lambda)}, "x": {len(st.X), len(c.x)}, "v": {len(st.V), len(c.v)},
		"top-k error": {len(st.TopkErr), topk},
	}, nil); err != nil {
		return err
	}
	active := 0
	for j, l := range st.Lambda {
		if !(l >= 0 && l <= 1) {
			return fmt.Errorf("%s: a saved λ_%d = %v outside [0, 1]", who, j, l)
		}
		if c.p.mode == lambdaOracle && (l == 0) != c.noisy[j] {
			return fmt.Errorf("%s: a saved λ_%d = %v that is not the oracle's", who, j, l)
		}
		if c.p.mode == lambdaLearned || l > 0 {
			active++
		}
	}
	n := c.data.N
	switch {
	case c.h == nil || c.h.hvpBatch <= 0 || c.h.hvpBatch >= n:
		if len(st.Hidx) != 0 {
			return fmt.Errorf("%s: %d saved HVP rows, the run uses all rows", who, len(st.Hidx))
		}
	case len(st.Hidx) != 0 && len(st.Hidx) != c.h.hvpBatch:
		return fmt.Errorf("%s: %d saved HVP rows, the run draws %d", who, len(st.Hidx), c.h.hvpBatch)
	}
	seen := make(map[int]bool, len(st.Hidx))
	for _, i := range st.Hidx {
		if i < 0 || i >= n || seen[i] {
			return fmt.Errorf("%s: the saved HVP rows hold row %d twice or outside 0 … %d", who, i, n-1)
		}
		seen[i] = true
	}
	if c.h == nil && st.InCall {
		return fmt.Errorf("%s: a saved hyper-gradient call, the run has none", who)
	}
	if len(st.Batch.Perm) != max(1, active) || !optim.IsPerm(st.Batch.Perm) || st.Batch.Pos < 0 || st.Batch.Pos > len(st.Batch.Perm) {
		return fmt.Errorf("%s: the saved minibatch order is no permutation of the %d rows λ keeps", who, max(1, active))
	}
	for _, r := range []struct {
		name string
		b    []byte
	}{{"minibatch", st.Batch.RNG}, {"HVP-row", st.HyperR}} {
		if err := rng.NewStream(0, 0, 0).UnmarshalBinary(r.b); err != nil { // a scratch stream
			return fmt.Errorf("%s: %s stream: %w", who, r.name, err)
		}
	}
	// Everything fits: load.
	copy(c.lambda, st.Lambda)
	c.setActive() // rebuilds the batcher over the kept rows
	if err := c.batch.Load(st.Batch); err != nil {
		return fmt.Errorf("%s: %w", who, err) // checked above: cannot happen
	}
	if err := c.hyperR.UnmarshalBinary(st.HyperR); err != nil {
		return fmt.Errorf("%s: HVP-row stream: %w", who, err)
	}
	copy(c.x, st.X)
	copy(c.v, st.V)
	c.hidx = slices.Clone(st.Hidx)
	c.train, c.inCall = st.Train, st.InCall
	if c.topk != nil {
		if err := c.topk.fb.SetError(st.TopkErr); err != nil {
			return fmt.Errorf("%s: %w", who, err)
		}
	}
	return nil
}
