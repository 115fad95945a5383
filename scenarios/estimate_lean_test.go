package scenarios

import (
	"strconv"
	"testing"
)

// The memory model of a PDBO-MTL&DA run with FedEM's CNN bases: six
// d_x-vectors per client on the sequential driver, eight under the actor
// runtime, and the model workspaces of the calls that run at once, not of
// every client; the peak is the memory limit run sets.
func TestEstimateLeanClients(t *testing.T) {
	part := func(r Resources, name string) int64 {
		for _, p := range r.Live {
			if p.Name == name {
				return p.Bytes
			}
		}
		t.Fatalf("no part %q in %v", name, r.Live)
		return 0
	}
	load := func(n int, driver string) Resources {
		sc, err := LoadWith("paper/personalization-cnn-stod.yaml", []Set{
			{Path: []string{"clients"}, Value: strconv.Itoa(n)},
			{Path: []string{"runtime", "driver"}, Value: driver},
			{Path: []string{"runtime", "parallel"}, Value: "2"}})
		if err != nil {
			t.Fatal(err)
		}
		return Estimate(sc)
	}
	const d = 3 * 2171786 // K = 3 bases of FedEM's CNN
	for _, c := range []struct {
		driver  string
		vectors int64
	}{{"sequential", 6}, {"actors", 8}} {
		r8, r16 := load(8, c.driver), load(16, c.driver)
		if got := part(r8, "client state"); got != 8*c.vectors*d*8 {
			t.Errorf("%s: client state %d bytes at n = 8, want %d vectors of d_x a client", c.driver, got, c.vectors)
		}
		if c.driver == "sequential" && part(r8, "model workspaces") != part(r16, "model workspaces") {
			t.Errorf("%s: the model workspaces grow with the clients (%d at n = 8, %d at n = 16)",
				c.driver, part(r8, "model workspaces"), part(r16, "model workspaces"))
		}
		if live := r8.LiveBytes(); r8.HeapLimit != live+live/4 || r8.PeakBytes != r8.HeapLimit+runtimeOverhead {
			t.Errorf("%s: live %d, heap limit %d, peak %d", c.driver, live, r8.HeapLimit, r8.PeakBytes)
		}
	}
}
