package scenarios

import (
	"strings"
	"testing"

	"hgpsim/optim"
)

// float32Test is an algorithm registered by this test binary only: fedavg
// under another name, declaring float32, so that the acceptance of
// precision: float32 is tested on an algorithm besides pdbo.
const float32Test = "float32-test"

func init() {
	optim.Algorithms.Register(float32Test, "Test only: fedavg, declaring that it computes in float32.",
		func() optim.Algorithm { return optim.Algorithms.MustNew("fedavg") }, optim.CanFloat32)
}

// float32Src is a small scenario of the test algorithm.
const float32Src = "clients: 6\nalgorithm:\n  kind: " + float32Test + "\nnetwork:\n  kind: star\n"

// precision is checked: float64 and float32 only, and float32 only for an
// algorithm that declared it, the refusal naming the algorithm and those
// that can.
func TestPrecisionKey(t *testing.T) {
	if sc := parseOK(t, tiny); sc.Precision != "float64" || sc.ElemBytes() != 8 {
		t.Errorf("default precision %q (%d bytes)", sc.Precision, sc.ElemBytes())
	}
	for _, c := range []struct{ src, want string }{
		{tiny + "precision: float16\n", `precision: must be one of float64, float32, got "float16"`},
		{"precision: float32\nalgorithm:\n  kind: fedavg\nnetwork:\n  kind: star\n",
			"precision: algorithm fedavg computes in float64 only, not float32 (those that do: " + float32Test + ", pdbo)"},
	} {
		_, err := Parse("test.yaml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
	if sc := parseOK(t, tiny+"precision: float32\n"); sc.Precision != "float32" {
		t.Errorf("pdbo in float32: precision %q", sc.Precision)
	}
	sc := parseOK(t, float32Src+"precision: float32\n")
	if sc.Precision != "float32" || sc.ElemBytes() != 4 {
		t.Errorf("precision %q (%d bytes)", sc.Precision, sc.ElemBytes())
	}
	out, err := Marshal(sc)
	if err != nil || !strings.Contains(string(out), "precision: float32") {
		t.Errorf("the resolved scenario (%v) does not keep the precision:\n%s", err, out)
	}
}

// validate's memory estimate counts the d_x-sized vectors at 4 bytes an
// element in float32: the client state halves, the rest of what does not
// depend on d_x stays.
func TestEstimateCountsPrecision(t *testing.T) {
	src := float32Src + "runtime:\n  workers: [a:1, b:2]\n"
	parts := func(prec string) map[string]int64 {
		sc := parseOK(t, src+"precision: "+prec+"\n")
		out := map[string]int64{}
		for _, p := range Estimate(sc).Processes {
			for _, q := range p.Live {
				out[p.Name+"/"+q.Name] += q.Bytes
			}
		}
		return out
	}
	p64, p32 := parts("float64"), parts("float32")
	if p64["worker/client state"] == 0 || p32["worker/client state"]*2 != p64["worker/client state"] {
		t.Errorf("client state: %d bytes in float64, %d in float32", p64["worker/client state"], p32["worker/client state"])
	}
	if p32["worker/round messages"] >= p64["worker/round messages"] || p32["worker/initial point"]*2 != p64["worker/initial point"] {
		t.Errorf("round messages %d → %d, initial point %d → %d", p64["worker/round messages"], p32["worker/round messages"],
			p64["worker/initial point"], p32["worker/initial point"])
	}
	if p32["worker/network"] != p64["worker/network"] || p32["worker/p̄/δ̄ counters"] != p64["worker/p̄/δ̄ counters"] {
		t.Error("precision changed what does not depend on it")
	}
}
