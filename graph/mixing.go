package graph

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// metropolis returns the Metropolis–Hastings weights of the undirected graph
// on n nodes: W_ij = 1/(1 + max(d_i, d_j)) on each edge and the rest of the
// row on the diagonal. Each weight needs only the two endpoint degrees, which
// is why it is the usual local choice; the result is symmetric and doubly
// stochastic.
func metropolis(n int, edges [][2]int) [][]float64 {
	return weightMatrix(n, edges, metropolisEdgeWeights(n, edges))
}

// metropolisEdgeWeights returns the Metropolis–Hastings weight of each edge.
func metropolisEdgeWeights(n int, edges [][2]int) []float64 {
	deg := make([]int, n)
	for _, e := range edges {
		deg[e[0]]++
		deg[e[1]]++
	}
	w := make([]float64, len(edges))
	for k, e := range edges {
		w[k] = 1 / float64(1+max(deg[e[0]], deg[e[1]]))
	}
	return w
}

// weightMatrix expands edge weights into the symmetric matrix
// W = I - Σ_e w_e (e_i - e_j)(e_i - e_j)ᵀ, whose rows sum to 1 by
// construction.
func weightMatrix(n int, edges [][2]int, w []float64) [][]float64 {
	m := identity(n)
	for k, e := range edges {
		i, j := e[0], e[1]
		m[i][j], m[j][i] = w[k], w[k]
		m[i][i] -= w[k]
		m[j][j] -= w[k]
	}
	// A node whose edge weights fill it up exactly may end a hair below
	// zero after rounding; the error is far below the row-sum tolerance.
	for i := range m {
		m[i][i] = math.Max(0, m[i][i])
	}
	return m
}

// slem is a workspace for the second-largest eigenvalue modulus of a
// symmetric doubly stochastic W. The eigenvalue 1 of the consensus vector 1
// is removed by taking the spectrum of W - 11ᵀ/n instead, where it becomes 0
// and every other eigenpair is unchanged, so SLEM = max |λ(W - 11ᵀ/n)|.
type slem struct {
	n   int
	a   *mat.SymDense
	eig mat.EigenSym
	vec mat.Dense
	val []float64
}

func newSLEM(n int) *slem {
	return &slem{n: n, a: mat.NewSymDense(n, nil), val: make([]float64, n)}
}

// eval factorizes W - 11ᵀ/n for the edge weights w and returns the SLEM.
// With vectors the eigenvectors are kept in s.vec for the gradient.
func (s *slem) eval(edges [][2]int, w []float64, vectors bool) float64 {
	n := s.n
	c := 1 / float64(n)
	for i := range n {
		for j := i; j < n; j++ {
			s.a.SetSym(i, j, -c)
		}
		s.a.SetSym(i, i, 1-c)
	}
	for k, e := range edges {
		i, j := e[0], e[1]
		s.a.SetSym(i, j, s.a.At(i, j)+w[k])
		s.a.SetSym(i, i, s.a.At(i, i)-w[k])
		s.a.SetSym(j, j, s.a.At(j, j)-w[k])
	}
	if !s.eig.Factorize(s.a, vectors) {
		return math.Inf(1) // treated as "no improvement" by the caller
	}
	s.eig.Values(s.val)
	if vectors {
		s.eig.VectorsTo(&s.vec)
	}
	return math.Max(-s.val[0], s.val[n-1])
}

// fastestMixing returns symmetric doubly stochastic weights supported on the
// undirected graph that approximately minimize the SLEM, the fastest-mixing
// Markov chain of Boyd, Diaconis & Xiao (2004).
//
// The problem is convex in the edge weights w over the polytope
// {w ≥ 0, Σ_{e∋i} w_e ≤ 1} (the last keeps the diagonal nonnegative). The
// SLEM is not smooth where eigenvalues cross, so plain subgradient steps
// stall on the ties that the optimum creates; we descend instead along a
// soft maximum over all |λ_k| within a shrinking temperature of the largest,
// which averages the subgradients of tied eigenvalues. Each partial
// derivative is ∂λ_k/∂w_e = -(u_ki - u_kj)² for unit eigenvector u_k. Steps
// are normalized and diminish as 1/√k; the iterate is kept feasible by
// clipping at 0 and scaling down edges at overfull nodes. We start from the
// Metropolis–Hastings weights, keep the best iterate seen, and stop once the
// SLEM has not improved for a while, so the result is never worse than
// Metropolis–Hastings.
func fastestMixing(n int, edges [][2]int) [][]float64 {
	const (
		maxIter  = 1500
		patience = 150 // iterations without improvement before stopping
		minGain  = 1e-9
	)
	w := metropolisEdgeWeights(n, edges)
	if len(edges) == 0 {
		return weightMatrix(n, edges, w)
	}
	best := append([]float64(nil), w...)
	s := newSLEM(n)
	bestVal := s.eval(edges, w, true)
	// Initial step: a fraction of the mean weight, so the first moves are
	// on the scale of the weights themselves.
	step0 := 0.0
	for _, x := range w {
		step0 += x
	}
	step0 = 0.5 * step0 / float64(len(w)) * math.Sqrt(float64(len(w)))
	g := make([]float64, len(edges))
	pi := make([]float64, n)
	load := make([]float64, n)
	since := 0
	for it := 0; it < maxIter && since < patience; it++ {
		// Soft maximum of |λ_k|: weights exp((|λ_k| - top)/τ), τ shrinking
		// so that late steps follow the true SLEM subgradient.
		top := math.Max(-s.val[0], s.val[n-1])
		tau := 0.02 * top / (1 + float64(it)/50)
		for k, l := range s.val {
			pi[k] = math.Exp((math.Abs(l) - top) / tau)
		}
		clear(g)
		raw := s.vec.RawMatrix() // column k is eigenvector k
		for k, l := range s.val {
			if pi[k] < 1e-12 {
				continue
			}
			sign := 1.0
			if l < 0 {
				sign = -1
			}
			for e, ed := range edges {
				d := raw.Data[ed[0]*raw.Stride+k] - raw.Data[ed[1]*raw.Stride+k]
				g[e] -= pi[k] * sign * d * d
			}
		}
		norm := 0.0
		for _, x := range g {
			norm += x * x
		}
		if norm == 0 {
			break
		}
		alpha := step0 / math.Sqrt(float64(it+1)) / math.Sqrt(norm)
		for e := range w {
			w[e] = math.Max(0, w[e]-alpha*g[e])
		}
		clear(load)
		for e, ed := range edges {
			load[ed[0]] += w[e]
			load[ed[1]] += w[e]
		}
		for e, ed := range edges {
			if over := math.Max(load[ed[0]], load[ed[1]]); over > 1 {
				w[e] /= over
			}
		}
		v := s.eval(edges, w, true)
		if v < bestVal-minGain {
			bestVal = v
			copy(best, w)
			since = 0
		} else {
			since++
		}
	}
	return weightMatrix(n, edges, best)
}

// slemOf returns the second-largest eigenvalue modulus of the symmetric
// doubly stochastic matrix m.
func slemOf(m [][]float64) float64 {
	n := len(m)
	var edges [][2]int
	var w []float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			if m[i][j] != 0 {
				edges = append(edges, [2]int{i, j})
				w = append(w, m[i][j])
			}
		}
	}
	return newSLEM(n).eval(edges, w, false)
}
