package nn_test

import (
	"fmt"
	"math/rand/v2"

	"hgpsim/models/nn"
)

// A preset network, its gradient and one Hessian-vector product of the mean
// cross-entropy on a small batch.
func Example() {
	in := nn.Shape{C: 1, H: 28, W: 28}
	layers, err := nn.Preset("node-weighting", in, 10)
	if err != nil {
		panic(err)
	}
	net, err := nn.New[float64](in, layers, 10)
	if err != nil {
		panic(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, net.Dim())
	net.Init(x, r)

	const n = 4
	a := make([]float64, n*in.Size())
	for i := range a {
		a[i] = r.Float64()
	}
	labels := []int{3, 1, 4, 1}
	g := make([]float64, net.Dim())
	loss := net.Grad(g, x, a, labels, 1e-4)
	hv := make([]float64, net.Dim())
	net.HVP(hv, x, a, labels, 1e-4, g)

	// ⟨g, ∇²f g⟩: the curvature along the gradient.
	var gHg float64
	for i := range g {
		gHg += g[i] * hv[i]
	}
	fmt.Printf("%d parameters, loss %.2f, curvature along the gradient %.1e\n", net.Dim(), loss, gHg)
	// Output: 363 parameters, loss 2.11, curvature along the gradient 1.3e+01
}
