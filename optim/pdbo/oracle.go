package pdbo

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"hgpsim/datasets"
	"hgpsim/models"
)

// The dense oracles below build the expected Jacobians of Eq. (8)
// explicitly with gonum. They cost O((n·d_x)³) and exist to check the
// estimators on small problems.

// denseHessian returns ∇²ₓf(x, λ) on the full batch, column by column from
// exact Hessian-vector products.
func denseHessian(m models.Bilevel[float64], x, lambda []float64, d *datasets.Dataset) *mat.Dense {
	return denseColumns(len(x), len(x), func(col, e []float64) { m.InnerHVP(col, x, lambda, d, nil, e) })
}

// denseCross returns (∂_λ∇ₓf)ᵀ as a d_λ × d_x matrix (nil when d_λ = 0).
func denseCross(m models.Bilevel[float64], x, lambda []float64, d *datasets.Dataset) *mat.Dense {
	if len(lambda) == 0 {
		return nil
	}
	return denseColumns(len(lambda), len(x), func(col, e []float64) { m.InnerCross(col, x, lambda, d, nil, e) })
}

// denseColumns builds the rows × cols matrix of a linear map from its
// action on the unit vectors: apply(col, e_k) writes column k.
func denseColumns(rows, cols int, apply func(col, e []float64)) *mat.Dense {
	a := mat.NewDense(rows, cols, nil)
	e, col := make([]float64, cols), make([]float64, rows)
	for k := 0; k < cols; k++ {
		e[k] = 1
		apply(col, e)
		a.SetCol(k, col)
		e[k] = 0
	}
	return a
}

// expectedJacobians builds Ā (n·d_x square, z-part only) and B̄
// (n·d_λ × n·d_x) of App. A.2 with full-batch curvature and the PBar of each
// Linearization taken as the true p̄, plus the stacked c^y and c^λ.
func expectedJacobians(lins []Linearization[float64]) (a, b *mat.Dense, cy, cl *mat.VecDense) {
	n := len(lins)
	dx, dl := lins[0].Model.DimX(), lins[0].Model.DimLambda()
	a = mat.NewDense(n*dx, n*dx, nil)
	b = mat.NewDense(max(n*dl, 1), n*dx, nil)
	cy = mat.NewVecDense(n*dx, nil)
	cl = mat.NewVecDense(max(n*dl, 1), nil)
	for i, lin := range lins {
		l := newLocal(lin)
		for k := 0; k < dx; k++ {
			cy.SetVec(i*dx+k, l.cy[k])
		}
		for k := 0; k < dl; k++ {
			cl.SetVec(i*dl+k, l.clam[k])
		}
		h := denseHessian(lin.Model, l.x, lin.Lambda, lin.Inner)
		c := denseCross(lin.Model, l.x, lin.Lambda, lin.Inner)
		step := lin.Step() // the guarded step where ω_i < ε
		s := step / lin.Omega
		pBar := lin.densePBar()
		for j := 0; j < n; j++ {
			p := pBar[j]
			blk := a.Slice(i*dx, (i+1)*dx, j*dx, (j+1)*dx).(*mat.Dense)
			switch {
			case lin.Variant == BeforeComm: // p̄_ij (I − (α/ω_i) H_i)
				blk.Scale(-p*s, h)
				for k := 0; k < dx; k++ {
					blk.Set(k, k, blk.At(k, k)+p)
				}
			default: // p̄_ij I + 1_ij (−(α/ω_i) H_i)
				for k := 0; k < dx; k++ {
					blk.Set(k, k, p)
				}
				if i == j {
					var t mat.Dense
					t.Scale(-s, h)
					blk.Add(blk, &t)
				}
			}
			if dl == 0 {
				continue
			}
			bb := b.Slice(i*dl, (i+1)*dl, j*dx, (j+1)*dx).(*mat.Dense)
			switch {
			case lin.Variant == BeforeComm:
				bb.Scale(-step*p, c)
			case i == j:
				bb.Scale(-step, c)
			}
		}
	}
	return a, b, cy, cl
}

// OracleError reports that the fixed-point oracle B̄(I − Ā)⁻¹c^y + c^λ does
// not exist at a linearization: I − Ā is singular, or the Neumann series
// Σ Āᵐ that HGP sums diverges (ρ(Ā) ≥ 1), so no estimator converges to it.
// The usual cause is a small push-sum weight ω_i, which makes the
// linearized step α/ω_i large.
type OracleError struct {
	Singular bool    // I − Ā is (numerically) singular; otherwise ρ(Ā) ≥ 1
	Radius   float64 // ρ(Ā); NaN when it could not be computed
	// Estimated says Radius is the power iteration's estimate (Ā of more
	// than exactRadiusRows rows), not the eigenvalues'.
	Estimated bool
	MinOmega  float64 // min_i ω_i of the linearization
	Err       error   // the solver's error when Singular
}

// Status is "singular" or "diverges".
func (e *OracleError) Status() string {
	if e.Singular {
		return "singular"
	}
	return "diverges"
}

func (e *OracleError) Error() string {
	var what string
	if e.Singular {
		what = "I − Ā is singular"
		if e.Err != nil {
			what += " (" + e.Err.Error() + ")"
		}
	} else {
		what = fmt.Sprintf("spectral radius of Ā is %s%.4g ≥ 1, the Neumann series diverges (Assumption 4 fails; lower the step size)", e.about(), e.Radius)
	}
	if e.Singular && !math.IsNaN(e.Radius) {
		what += fmt.Sprintf("; spectral radius of Ā is %s%.4g", e.about(), e.Radius)
	}
	return fmt.Sprintf("fixed-point oracle does not exist: %s; min ω = %.4g", what, e.MinOmega)
}

func (e *OracleError) Unwrap() error { return e.Err }

// about marks an estimated radius.
func (e *OracleError) about() string {
	if e.Estimated {
		return "about "
	}
	return ""
}

// exactRadiusRows bounds the rows of Ā whose spectral radius comes from
// its eigenvalues (an O(rows³) decomposition, about 20 times the cost of
// the solve); past it a power iteration estimates it in O(rows²) per
// step.
const exactRadiusRows = 600

// FixedPointOracle returns B̄(I − Ā)⁻¹c^y + c^λ per client: the quantity HGP
// estimates (App. A.2–A.3), with the lins' PBar as the true p̄ and full
// batches. When the oracle does not exist — I − Ā singular, or ρ(Ā) ≥ 1 —
// it returns an *OracleError. ρ(Ā) comes from the eigenvalues up to
// exactRadiusRows rows of Ā, and from a power iteration past that
// (radiusEstimate).
func FixedPointOracle(lins []Linearization[float64]) ([][]float64, error) {
	a, b, cy, cl := expectedJacobians(lins)
	n := a.RawMatrix().Rows
	var ima mat.Dense
	ima.Scale(-1, a)
	for k := 0; k < n; k++ {
		ima.Set(k, k, ima.At(k, k)+1)
	}
	minOmega := math.Inf(1)
	for _, l := range lins {
		minOmega = math.Min(minOmega, l.Omega)
	}
	estimated := n > exactRadiusRows
	radius := spectralRadius
	if estimated {
		radius = radiusEstimate
	}
	rho := radius(a)
	var q mat.VecDense
	if err := q.SolveVec(&ima, cy); err != nil {
		return nil, &OracleError{Singular: true, Radius: rho, Estimated: estimated, MinOmega: minOmega, Err: err}
	}
	if rho >= 1 {
		return nil, &OracleError{Radius: rho, Estimated: estimated, MinOmega: minOmega}
	}
	return stackedHyper(lins, b, &q, cl), nil
}

// TruncatedOracle returns B̄ Σ_{m<M} Ā^m c^y + c^λ: the expectation of HGP
// after M iterations with alternate sampling (Eq. 9).
func TruncatedOracle(lins []Linearization[float64], m int) [][]float64 {
	a, b, cy, cl := expectedJacobians(lins)
	sum := mat.VecDenseCopyOf(cy)
	term := mat.VecDenseCopyOf(cy)
	var next mat.VecDense
	for k := 1; k < m; k++ {
		next.MulVec(a, term)
		term.CopyVec(&next)
		sum.AddVec(sum, term)
	}
	return stackedHyper(lins, b, sum, cl)
}

func stackedHyper(lins []Linearization[float64], b *mat.Dense, q, cl *mat.VecDense) [][]float64 {
	dl := lins[0].Model.DimLambda()
	var v mat.VecDense
	v.MulVec(b, q)
	out := make([][]float64, len(lins))
	for i := range out {
		out[i] = make([]float64, dl)
		for k := 0; k < dl; k++ {
			out[i][k] = v.AtVec(i*dl+k) + cl.AtVec(i*dl+k)
		}
	}
	return out
}

func spectralRadius(a *mat.Dense) float64 {
	var eig mat.Eigen
	if !eig.Factorize(a, mat.EigenNone) {
		return math.NaN()
	}
	r := 0.0
	for _, v := range eig.Values(nil) {
		r = math.Max(r, math.Hypot(real(v), imag(v)))
	}
	return r
}

// radiusSteps is the power iteration's length: the estimate is the growth
// over its second half, so a transient factor C of the first half costs a
// relative error of about C^(2/radiusSteps) (1.5 % for C = 100), and a
// second eigenvalue of modulus r·ρ weighs r^(radiusSteps/2) against ρ's.
const radiusSteps = 600

// radiusEstimate estimates ρ(a) by the power iteration: the geometric mean
// growth ‖a v‖/‖v‖ over the second half of radiusSteps steps from a fixed
// pseudo-random start. Unlike the last step's ratio it converges when the
// dominant eigenvalues are a complex pair (the norm then oscillates about
// ρᵗ), and it needs O(rows²) per step, no decomposition. A start without
// a component along the dominant eigenvectors would miss them; a generic
// start has one. NaN when an entry is not finite.
func radiusEstimate(a *mat.Dense) float64 {
	n := a.RawMatrix().Rows
	r := rand.New(rand.NewPCG(1, 2))
	v := mat.NewVecDense(n, nil)
	for k := 0; k < n; k++ {
		v.SetVec(k, r.NormFloat64())
	}
	v.ScaleVec(1/mat.Norm(v, 2), v)
	var w mat.VecDense
	logGrowth := 0.0
	for t := 0; t < radiusSteps; t++ {
		w.MulVec(a, v)
		g := mat.Norm(&w, 2)
		switch {
		case g == 0:
			return 0 // a v = 0: nilpotent along the start
		case math.IsNaN(g) || math.IsInf(g, 0):
			return math.NaN()
		}
		if t >= radiusSteps/2 {
			logGrowth += math.Log(g)
		}
		v.ScaleVec(1/g, &w)
	}
	return math.Exp(logGrowth / float64(radiusSteps-radiusSteps/2))
}

// ConsensusClient is what the consensus oracle needs of one client.
type ConsensusClient struct {
	Model  models.Bilevel[float64]
	Inner  *datasets.Dataset
	Outer  *datasets.Dataset
	Lambda []float64
}

// PooledMinimizer returns x* = argmin_x Σ_k f_k(x, λ_k) by Newton's method
// with exact dense Hessians (small d_x only).
func PooledMinimizer(cs []ConsensusClient, x0 []float64) ([]float64, error) {
	dx := len(x0)
	x := append([]float64(nil), x0...)
	g := make([]float64, dx)
	gk := make([]float64, dx)
	for it := 0; it < 100; it++ {
		h := mat.NewDense(dx, dx, nil)
		for k := range g {
			g[k] = 0
		}
		for _, c := range cs {
			c.Model.InnerGrad(gk, x, c.Lambda, c.Inner, nil)
			for k := range g {
				g[k] += gk[k]
			}
			h.Add(h, denseHessian(c.Model, x, c.Lambda, c.Inner))
		}
		norm := 0.0
		for _, v := range g {
			norm = math.Max(norm, math.Abs(v))
		}
		if norm < 1e-13 {
			return x, nil
		}
		var step mat.VecDense
		if err := step.SolveVec(h, mat.NewVecDense(dx, append([]float64(nil), g...))); err != nil {
			return nil, fmt.Errorf("pooled minimizer: singular Hessian: %w", err)
		}
		for k := range x {
			x[k] -= step.AtVec(k)
		}
	}
	return nil, fmt.Errorf("pooled minimizer: Newton did not converge in 100 steps")
}

// ConsensusOracle returns the hyper-gradient of the consensus problem
// min_λ (1/n)Σ F_i(x*(λ), λ_i), x*(λ) = argmin Σ_k f_k(x, λ_k):
//
//	d_{λ_i}F̄ = (1/n)∂_λF_i(x*) − (∂_λ∇ₓf_i)ᵀ (Σ_k ∇²ₓf_k)⁻¹ (1/n)Σ_k ∇ₓF_k(x*),
//
// what PDBO ultimately wants.
func ConsensusOracle(cs []ConsensusClient, xStar []float64) ([][]float64, error) {
	n := float64(len(cs))
	dx := len(xStar)
	h := mat.NewDense(dx, dx, nil)
	g := mat.NewVecDense(dx, nil)
	gx := make([]float64, dx)
	outs := make([][]float64, len(cs))
	for i, c := range cs {
		h.Add(h, denseHessian(c.Model, xStar, c.Lambda, c.Inner))
		gl := make([]float64, c.Model.DimLambda())
		c.Model.OuterGrad(gx, gl, xStar, c.Lambda, c.Outer, nil)
		for k := range gx {
			g.SetVec(k, g.AtVec(k)+gx[k]/n)
		}
		for k := range gl {
			gl[k] /= n
		}
		outs[i] = gl
	}
	var q mat.VecDense
	if err := q.SolveVec(h, g); err != nil {
		return nil, fmt.Errorf("consensus oracle: singular Hessian: %w", err)
	}
	for i, c := range cs {
		cr := denseCross(c.Model, xStar, c.Lambda, c.Inner)
		if cr == nil {
			continue
		}
		var t mat.VecDense
		t.MulVec(cr, &q)
		for k := range outs[i] {
			outs[i][k] -= t.AtVec(k)
		}
	}
	return outs, nil
}

// ExpectedFixedPoint iterates the expected SGP map of Eq. (6) with true
// push weights pBar[i][j] and full batches until it stops moving, and
// returns y* = (z*, ω*) per client: the point where HGP's oracle is exact.
// With the lins' WeightFloor it iterates the guarded map.
func ExpectedFixedPoint(lins []Linearization[float64], pBar [][]float64, x0 []float64, maxIter int, tol float64) (z [][]float64, omega []float64, err error) {
	n := len(lins)
	dx := len(x0)
	z = make([][]float64, n)
	next := make([][]float64, n)
	phi := make([][]float64, n)
	omega = make([]float64, n)
	nextW := make([]float64, n)
	g := make([]float64, dx)
	x := make([]float64, dx)
	for i := range z {
		z[i] = append([]float64(nil), x0...)
		next[i] = make([]float64, dx)
		phi[i] = make([]float64, dx)
		omega[i] = 1
	}
	for it := 0; it < maxIter; it++ {
		for j, lin := range lins { // φ_j and the (4b) local step ψ_j
			for k := range x {
				x[k] = z[j][k] / omega[j]
			}
			lin.Model.InnerGrad(g, x, lin.Lambda, lin.Inner, nil)
			step := lin.LR * GuardScale(omega[j], lin.WeightFloor)
			for k := range g {
				phi[j][k] = z[j][k]
				if lin.Variant == BeforeComm {
					phi[j][k] -= step * g[k]
				}
			}
			if lin.Variant != BeforeComm {
				for k := range g {
					next[j][k] = -step * g[k]
				}
			} else {
				clear(next[j])
			}
			nextW[j] = 0
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				p := pBar[j][i]
				if p == 0 {
					continue
				}
				for k := range x {
					next[i][k] += p * phi[j][k]
				}
				nextW[i] += p * omega[j]
			}
		}
		change := 0.0
		for i := range z {
			for k := range z[i] {
				change = math.Max(change, math.Abs(next[i][k]-z[i][k]))
			}
			z[i], next[i] = next[i], z[i]
			omega[i] = nextW[i]
		}
		if change < tol {
			return z, omega, nil
		}
	}
	return nil, nil, fmt.Errorf("expected SGP map did not settle within %d iterations (tolerance %g)", maxIter, tol)
}
