package wire

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/internal/codec"
	"hgpsim/optim"
)

func TestCodecMatchesGenerated(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	f := func() float64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return math.Float64frombits(r.Uint64())
		}
		return r.NormFloat64()
	}
	vec := func() []float64 {
		if r.IntN(3) == 0 {
			return nil
		}
		v := make([]float64, r.IntN(30))
		for i := range v {
			v[i] = f()
		}
		return v
	}
	in := func() int {
		if r.IntN(5) == 0 {
			return 0
		}
		if r.IntN(5) == 0 {
			return math.MaxInt64 - r.IntN(3)
		}
		return r.IntN(1000)
	}
	str := func() string { return []string{"", "sgp", "λ", "hypergradient"}[r.IntN(4)] }
	pay := func() optim.Payload { return optim.Payload{Kind: optim.Kind(r.IntN(256)), Vec: vec(), Mass: f()} }
	same := func(what string, got []byte, err error, m []byte, err2 error) {
		t.Helper()
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if !bytes.Equal(got, m) {
			t.Fatalf("%s:\ncodec %x\nproto %x", what, got, m)
		}
	}
	for range 2000 {
		p := pay()
		b, err := codec.Marshal(p)
		m, err2 := Marshal(FromPayload(p))
		same("payload", b, err, m, err2)
		msg := optim.Message{From: in(), Round: in(), Phase: str(), Weight: f(), Payload: pay()}
		b, err = codec.Marshal(msg)
		m, err2 = Marshal(FromMessage(msg))
		same("message", b, err, m, err2)
		env := optim.Envelope{To: in(), Weight: f(), Pushed: r.IntN(2) == 0, Payload: pay()}
		b, err = codec.Marshal(env)
		m, err2 = Marshal(FromEnvelope(env))
		same("envelope", b, err, m, err2)
		st := optim.Stats{TrainLoss: f(), TrainAcc: f(), ValLoss: f(), ValAcc: f(), TestLoss: f(), TestAcc: f(), OuterLoss: f(),
			TrainN: in(), ValN: in(), TestN: in(), X: vec(), Hyper: vec(), Weight: f()}
		b, err = codec.Marshal(st)
		m, err2 = Marshal(FromStats(st))
		same("stats", b, err, m, err2)
		sp := &optim.PhaseSpec{Name: str(), Rounds: in(), EvalEvery: in(), Step: in(), Tick: int64(in()) - 1, Track: r.IntN(2) == 0,
			Offset: in(), Continued: r.IntN(2) == 0, Total: in()}
		if r.IntN(2) == 0 {
			sp.States = [][]byte{{1, 2}, nil, {3}}
		}
		b, err = codec.Marshal(sp)
		m, err2 = Marshal(FromPhaseSpec(sp))
		same("spec", b, err, m, err2)
		res := optim.Result{State: []byte(str()), Stateless: str()}
		b, err = codec.Marshal(res)
		m, err2 = Marshal(FromResult(res))
		same("result", b, err, m, err2)
	}
}
