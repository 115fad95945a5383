package scenarios

import (
	"testing"

	"hgpsim/models"
)

// In float32 the memory model counts the clients' vectors, the initial
// point and the scratch vectors at 4 bytes and the CNN's workspace at its
// float32 size (models.WorkspaceOf), and the paper's CNN setting (n = 100,
// K = 3 bases of FedEM's CNN) fits the 22 GiB it is sized for.
func TestEstimateFloat32(t *testing.T) {
	part := func(r Resources, name string) int64 {
		for _, p := range r.Live {
			if p.Name == name {
				return p.Bytes
			}
		}
		t.Fatalf("no part %q in %v", name, r.Live)
		return 0
	}
	load := func(precision string) (Scenario, Resources) {
		sc, err := LoadWith("paper/personalization-cnn-stod.yaml", []Set{
			{Path: []string{"clients"}, Value: "100"},
			{Path: []string{"precision"}, Value: precision},
			{Path: []string{"runtime", "driver"}, Value: "sequential"},
			{Path: []string{"runtime", "parallel"}, Value: "2"}})
		if err != nil {
			t.Fatal(err)
		}
		return sc, Estimate(sc)
	}
	sc, r32 := load("float32")
	_, r64 := load("float64")
	for _, name := range []string{"client state", "initial point"} {
		if a, b := part(r32, name), part(r64, name); 2*a != b {
			t.Errorf("%s: %d bytes in float32, %d in float64: want half", name, a, b)
		}
	}
	features, classes := sc.Shape()
	const d, k = 3 * 2171786, 3
	cost := sc.Model.Arch.Params.(models.Coster).Cost(features, classes, max(sc.SGP.Batch, sc.Hypergradient.Batch, 1))
	if got, want := part(r32, "model workspaces"), 2*(k*models.WorkspaceOf[float32](cost)+4*d); got != want {
		t.Errorf("model workspaces: %d bytes in float32, want 2 calls × (K × %d + 4·d_x) = %d", got, models.WorkspaceOf[float32](cost), want)
	}
	if r32.PeakBytes > 22<<30 {
		t.Errorf("n = 100 in float32: peak %d bytes, more than 22 GiB", r32.PeakBytes)
	}
	// The time at float32's rates: between mixing's 2 and the products'
	// 2.14 times less than float64's (the gradients' 2.1 lie between).
	if ratio := r64.Seconds / r32.Seconds; ratio <= 2 || ratio >= 2.14 {
		t.Errorf("time: %.0f s in float64, %.0f s in float32: ratio %.2f, want within (2, 2.14)", r64.Seconds, r32.Seconds, ratio)
	}
}
