package fbo

import (
	"fmt"

	"gonum.org/v1/gonum/floats"

	"hgpsim/datasets"
	"hgpsim/internal/rng"
	"hgpsim/models"
	"hgpsim/optim"
)

// server is node 0: it samples S, broadcasts and averages.
type server struct {
	method    scheme
	p         *Params
	x, y      []float64 // global outer and inner variables
	q, z, h   []float64 // aggregates: lower gradient, AggITD's z, hyper-gradient
	pcur      []float64 // FedNest's current Neumann term
	psum      []float64 // FedNest's sum of Neumann terms
	m, sample int
	r         *rng.Stream
	chosen    []int
	model     models.Bilevel[float64]
	test      *datasets.Dataset
	stages    *schedule
	out       optim.SendBuffers
	acc       [][]float64 // per part of the upload: running sums
	got       int         // uploads in the last average
	relSum    []float64   // released Neumann: sum of every upload of the iteration's Neumann rounds
	relN      int         // and their number
}

// Enter implements Client.
func (s *server) Enter(spec *optim.PhaseSpec) (optim.Behaviour, error) {
	st, err := phaseSchedule(s.method, spec)
	if err != nil {
		return nil, err
	}
	s.stages = st
	return s, nil
}

func (s *server) send(out optim.Outbox, parts ...[]float64) {
	optim.Send(out, s.chosen, optim.Payload{Kind: optim.KindModel, Vec: s.out.Fill(parts...)})
}

// Send implements Behaviour: the server's half of a communication round.
func (s *server) Send(r *optim.Round, out optim.Outbox) error {
	if !r.Down() {
		return nil
	}
	st := s.stages.at(r.Exchange())
	var pre []float64
	if st.first {
		// A new outer iteration: draw S from the server's own stream.
		s.chosen = optim.SampleClients(s.r.Rand, s.m, s.sample, s.chosen)
		pre = s.x
	}
	switch st.kind {
	case stLowerA:
		if st.q >= 0 && st.t > st.q {
			s.send(out, pre, s.y, s.z)
		} else {
			s.send(out, pre, s.y)
		}
	case stLowerB:
		s.send(out, pre, s.q)
	case stLowerLocal, stP0, stLocalUpper:
		s.send(out, pre, s.y)
	case stNeumann:
		s.send(out, pre, s.pcur)
	case stHyper:
		p := make([]float64, len(s.y))
		s.method.hyperP(p, s)
		s.send(out, pre, p)
	case stUpper:
		s.send(out, pre, s.h)
	}
	return nil
}

// Receive implements Behaviour: the server averages the uploads that
// arrived (a lost upload is missing from the mean; with none, the
// aggregate keeps its previous value).
func (s *server) Receive(r *optim.Round, in []optim.Message) error {
	if !r.Up() {
		return nil
	}
	st := s.stages.at(r.Exchange())
	dy, dx := len(s.y), len(s.x)
	var sizes []int
	switch st.kind {
	case stLowerA:
		sizes = []int{dy}
		if st.q >= 0 && st.t >= st.q {
			sizes = []int{dy, dy}
		}
	case stLowerB, stLowerLocal, stP0, stNeumann:
		sizes = []int{dy}
	case stHyper, stUpper, stLocalUpper:
		sizes = []int{dx}
	}
	mean, ok := s.average(in, sizes, r.Index)
	switch st.kind {
	case stLowerA:
		if ok {
			s.q = setVec(s.q, mean[0])
		} else if s.q == nil {
			s.q = make([]float64, dy)
		}
		if len(sizes) == 2 {
			if ok {
				s.z = setVec(s.z, mean[1])
			} else if st.t == st.q || s.z == nil {
				s.z = setVec(s.z, make([]float64, dy)) // no r arrived: p = 0
			}
		}
	case stLowerB, stLowerLocal:
		if ok {
			copy(s.y, mean[0])
		}
	case stP0:
		s.pcur = setVec(s.pcur, make([]float64, dy))
		if ok {
			copy(s.pcur, mean[0])
		}
		s.psum = setVec(s.psum, s.pcur)
		s.relSum, s.relN = setVec(s.relSum, make([]float64, dy)), 0
	case stNeumann:
		if released(s.method) {
			// The released code's list of uploads grows over the rounds:
			// p_t is the mean of all of them so far.
			if ok {
				floats.AddScaled(s.relSum, float64(s.got), mean[0])
				s.relN += s.got
				floats.ScaleTo(s.pcur, 1/float64(s.relN), s.relSum)
			}
			break
		}
		if ok {
			copy(s.pcur, mean[0])
		}
		floats.Add(s.psum, s.pcur)
	case stHyper:
		s.h = setVec(s.h, make([]float64, dx))
		if ok {
			copy(s.h, mean[0])
		}
	case stUpper, stLocalUpper:
		if ok {
			copy(s.x, mean[0])
		}
	}
	if !optim.AllFinite(s.x) || !optim.AllFinite(s.y) {
		return fmt.Errorf("%w in the global model after %s round %d (lower beta or alpha)", optim.ErrNonFinite, stageName(st.kind), r.Exchange())
	}
	return nil
}

// average returns the means of the parts of the uploads that arrived.
func (s *server) average(in []optim.Message, sizes []int, round int) ([][]float64, bool) {
	total := 0
	for _, n := range sizes {
		total += n
	}
	if len(s.acc) < len(sizes) {
		s.acc = append(s.acc, make([][]float64, len(sizes)-len(s.acc))...)
	}
	acc := s.acc[:len(sizes)]
	for k, n := range sizes {
		if len(acc[k]) != n {
			acc[k] = make([]float64, n)
		}
		clear(acc[k])
	}
	got := 0
	for _, m := range in {
		// An upload delayed past its round answers another stage: stale,
		// it counts as lost.
		if m.From == 0 || m.Round != round || len(m.Vec) != total {
			continue
		}
		off := 0
		for k, n := range sizes {
			floats.Add(acc[k], m.Vec[off:off+n])
			off += n
		}
		got++
	}
	s.got = got
	if got == 0 {
		return nil, false
	}
	for _, a := range acc {
		floats.Scale(1/float64(got), a)
	}
	return acc, true
}

// released reports whether m is FedNest with the released code's Neumann
// accumulation.
func released(m scheme) bool {
	f, ok := m.(*FedNest)
	return ok && f.Variant == "released"
}

// setVec copies src into dst, reallocating when the length differs.
func setVec(dst, src []float64) []float64 {
	if len(dst) != len(src) {
		dst = make([]float64, len(src))
	}
	copy(dst, src)
	return dst
}

// Observe implements Observer: the global (y, x) on the server's test data.
func (s *server) Observe() optim.Stats {
	st := optim.Stats{X: s.x}
	st.TestN, st.TestLoss, st.TestAcc = optim.Evaluate(s.test, func(d *datasets.Dataset) (float64, float64) {
		return s.model.InnerLoss(s.y, s.x, d, nil), s.model.Accuracy(s.y, s.x, d, nil)
	})
	return st
}
