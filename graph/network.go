package graph

import (
	"fmt"
	"math"
	"strings"
)

// Edge is one directed (or, in a symmetric network, undirected) link with
// its per-round probability of being up.
type Edge struct {
	From int     `yaml:"from"`
	To   int     `yaml:"to"`
	Prob float64 `yaml:"prob"`
}

// SetDefaults makes a listed link deterministic unless its prob is given.
func (e *Edge) SetDefaults() { e.Prob = 1 }

// Network is the expected graph plus the process that realizes its edges
// each round. Build returns a Network that is read-only from then on: it is
// safe for concurrent use by any number of goroutines, and Realize's
// out-neighbour cache assumes Prob is never changed afterwards.
type Network struct {
	// Kind is the Spec.Kind the network was built from (informational).
	Kind string
	// N is the number of clients.
	N int
	// Prob[i][j] is δ̄_{i→j}, the per-round probability that the link i→j is
	// up. Prob[i][i] is 1 and 0 means there is no link. It is nil for a
	// sparse topology (see Sparse), whose δ̄ live in adjacency lists only:
	// read δ̄ with Delta and the links with Out, which work either way.
	Prob [][]float64
	// Symmetric reports an undirected edge process: δ_{i→j}^{(t)} = δ_{j→i}^{(t)}
	// at every tick, both directions decided by one draw.
	Symmetric bool
	// Mixing, when not nil, holds fixed push weights: Mixing[i][j] = p_ij is
	// what sender i gives receiver j, each row sums to 1. It replaces the
	// uniform rule and requires every link to be deterministic (Prob 0 or 1).
	// Build sets it for static-undirected (a symmetric doubly stochastic
	// matrix) and fully-connected (all 1/n).
	Mixing [][]float64
	// Seed keys the edge realizations; see Realize.
	Seed uint64
	// Process realizes the links with 0 < δ̄ < 1 round by round; nil means
	// Bernoulli (independently at every round, as the paper assumes).
	Process LinkProcess
	// Failures are the failure processes on top of Process (nodes
	// offline, cut links, delays); see SetFailures.
	Failures []Failure

	// out[i] lists the j with Prob[i][j] > 0 in ascending order, self
	// included, and outProb[i] their probabilities, so that Realize costs
	// O(out-degree) instead of O(N). Nil for a Network not made by Build, in
	// which case Realize scans Prob[i].
	out     [][]int
	outProb [][]float64
}

// index builds the out-neighbour lists used by Realize (from Prob; a
// sparse network has them already).
func (nw *Network) index() {
	if nw.Prob == nil && nw.out != nil {
		return
	}
	nw.out = make([][]int, nw.N)
	nw.outProb = make([][]float64, nw.N)
	for i, row := range nw.Prob {
		for j, p := range row {
			if p > 0 || j == i {
				nw.out[i] = append(nw.out[i], j)
				nw.outProb[i] = append(nw.outProb[i], p)
			}
		}
	}
}

// up reports δ_{i→j}^{(tick)} for a non-self link with probability p. The
// draw is keyed by the unordered pair in a symmetric network, so that both
// endpoints see the same realization without talking to each other.
func (nw *Network) up(i, j int, p float64, tick uint64) bool {
	if p >= 1 {
		return true
	}
	if p <= 0 {
		return false
	}
	a, b := i, j
	if nw.Symmetric && b < a {
		a, b = b, a
	}
	if nw.Process == nil { // a Network not made by Build
		return (*Bernoulli)(nil).Up(nw.Seed, a, b, p, tick)
	}
	return nw.Process.Up(nw.Seed, a, b, p, tick)
}

// Realize appends to dst[:0] the receivers j, in ascending order and always
// including i itself, whose link i→j is up at communication round tick, and
// returns the result.
//
// The outcome of link i→j is Process.Up(Seed, a, b, Prob[i][j], tick) —
// for the default Bernoulli process rng.Uniform(Seed, PurposeEdges, a, b,
// tick) < Prob[i][j] — with (a, b) = (i, j) in a directed network and
// (min, max) of the pair in a symmetric one. It is therefore a pure function of its
// arguments: the sender, the router and a test can each recompute it, in any
// order and in any goroutine, and always agree. Links with Prob 1 need no
// draw. Realize does not allocate when cap(dst) is at least the out-degree
// of i plus one.
func (nw *Network) Realize(i int, tick uint64, dst []int) []int {
	dst = dst[:0]
	if len(nw.Failures) > 0 {
		return nw.realizeFailing(i, tick, dst)
	}
	if nw.out != nil {
		ps := nw.outProb[i]
		for k, j := range nw.out[i] {
			if j == i || nw.up(i, j, ps[k], tick) {
				dst = append(dst, j)
			}
		}
		return dst
	}
	for j, p := range nw.Prob[i] {
		if j == i || nw.up(i, j, p, tick) {
			dst = append(dst, j)
		}
	}
	return dst
}

// realizeFailing is Realize under failure processes: an offline node
// reaches nobody, itself included (it does not run), and a link that a
// process cuts, or whose receiver is offline, is down.
func (nw *Network) realizeFailing(i int, tick uint64, dst []int) []int {
	if nw.Offline(i, tick) {
		return dst
	}
	if nw.out == nil { // a Network not made by Build
		for j, p := range nw.Prob[i] {
			if j == i || (p > 0 && nw.up(i, j, p, tick) && !nw.cut(i, j, tick)) {
				dst = append(dst, j)
			}
		}
		return dst
	}
	probs := nw.outProb[i]
	for k, j := range nw.out[i] {
		if j == i || (nw.up(i, j, probs[k], tick) && !nw.cut(i, j, tick)) {
			dst = append(dst, j)
		}
	}
	return dst
}

// PushWeights writes into dst[:len(recv)] the push weights p_ij(δ_i) for the
// realized receivers recv of sender i (as returned by Realize) and returns
// dst[:len(recv)]. With fixed Mixing the weight is Mixing[i][j]; otherwise it
// is the uniform rule of Sec. 6.1,
//
//	p_ij(δ_i) = δ_{i→j} / Σ_k δ_{i→k}   (self included),
//
// i.e. 1/len(recv) for every realized receiver. Either way the weights sum
// to 1, so P^{(t)} with P_ji = p_ij is column stochastic (Eq. 3). dst is
// grown only if its capacity is smaller than len(recv).
func (nw *Network) PushWeights(i int, recv []int, dst []float64) []float64 {
	if cap(dst) < len(recv) {
		dst = make([]float64, len(recv))
	}
	dst = dst[:len(recv)]
	if nw.Mixing != nil {
		row := nw.Mixing[i]
		for k, j := range recv {
			dst[k] = row[j]
		}
		if nw.out != nil && len(recv) < len(nw.out[i]) {
			// A failure took some fixed links down: the sender keeps their
			// weight, so the column still sums to 1 and no mass is lost.
			self := -1
			rest := 1.0
			for k, j := range recv {
				if j == i {
					self = k
				} else {
					rest -= row[j]
				}
			}
			if self >= 0 {
				dst[self] = rest
			}
		}
		return dst
	}
	w := 1 / float64(len(recv))
	for k := range dst {
		dst[k] = w
	}
	return dst
}

// ExpectedPushWeights returns pBar[i][j] = E_δ[p_ij(δ_i)], computed exactly.
// The result is dense, n × n, whatever the storage: callers keep it to
// networks of at most MaxNodes nodes.
//
// With fixed Mixing it is a copy of Mixing. Under the uniform rule the
// out-links of one sender are independent Bernoulli variables (also in a
// symmetric network: distinct pairs are drawn independently), so for j ≠ i
//
//	pBar_ij = δ̄_ij · E[1 / (2 + S_{-j})],
//
// where S_{-j} counts the realized non-self links of i other than j, a
// Poisson-binomial variable, and pBar_ii = E[1 / (1 + S)] with S counting all
// of them. The distribution of S comes from a dynamic programme over the
// counts, and each S_{-j} from removing link j from it again, which keeps
// the cost at O(d²) per sender for out-degree d.
func (nw *Network) ExpectedPushWeights() [][]float64 {
	pBar := make([][]float64, nw.N)
	if nw.Mixing != nil {
		for i, row := range nw.Mixing {
			pBar[i] = append([]float64(nil), row...)
		}
		return pBar
	}
	var q []float64    // probabilities of the random links of sender i
	var f, g []float64 // pmf of S and of S_{-j}
	var row []float64  // δ̄ of sender i, dense
	for i := range nw.N {
		pBar[i] = make([]float64, nw.N)
		if nw.Prob != nil {
			row = nw.Prob[i]
		} else {
			row = resize(row, nw.N)
			clear(row)
			js, ps := nw.Out(i)
			for k, j := range js {
				row[j] = ps[k]
			}
		}
		q = q[:0]
		sure := 0 // links with δ̄ = 1, which are always up
		for j, p := range row {
			switch {
			case j == i || p <= 0:
			case p >= 1:
				sure++
			default:
				q = append(q, p)
			}
		}
		f = poissonBinomial(f, q)
		// A sure link j ≠ i leaves the same other links as self does, so it
		// shares self's expected weight E[1/(1 + sure + S_rand)].
		self := 0.0
		for s, fs := range f {
			self += fs / float64(1+sure+s)
		}
		for j, p := range row {
			switch {
			case j == i || p >= 1:
				pBar[i][j] = self
			case p > 0:
				g = removeBernoulli(g, f, p)
				e := 0.0
				for s, gs := range g {
					e += gs / float64(2+sure+s)
				}
				pBar[i][j] = p * e
			}
		}
	}
	return pBar
}

// poissonBinomial writes into dst the pmf of the number of successes among
// independent Bernoulli(q[k]) trials: dst[s] = P(S = s), s = 0..len(q).
func poissonBinomial(dst, q []float64) []float64 {
	dst = resize(dst, len(q)+1)
	clear(dst)
	dst[0] = 1
	for k, p := range q {
		for s := k + 1; s >= 1; s-- {
			dst[s] = dst[s]*(1-p) + dst[s-1]*p
		}
		dst[0] *= 1 - p
	}
	return dst
}

// removeBernoulli writes into dst the pmf g of S - X given the pmf f of S,
// where X ~ Bernoulli(p), 0 < p < 1, is one of the independent trials in S:
// it inverts f[s] = (1-p)·g[s] + p·g[s-1]. The recursion runs upwards when
// p <= 1/2 and downwards otherwise, so that each step multiplies the error
// carried from the previous one by at most 1 and the inversion stays stable.
func removeBernoulli(dst, f []float64, p float64) []float64 {
	m := len(f) - 1 // trials in S; g has m entries
	dst = resize(dst, m)
	if p <= 0.5 {
		prev := 0.0
		for s := 0; s < m; s++ {
			prev = math.Max(0, (f[s]-p*prev)/(1-p))
			dst[s] = prev
		}
		return dst
	}
	next := 0.0
	for s := m; s >= 1; s-- {
		next = math.Max(0, (f[s]-(1-p)*next)/p)
		dst[s-1] = next
	}
	return dst
}

// resize returns s with length n, reusing its storage when large enough.
func resize(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// Validate checks that the network is well formed and meets the paper's
// assumptions on the expected graph {(i, j): δ̄_ij > 0}:
//
//   - shape N×N, probabilities in [0, 1] and a unit diagonal, since a client
//     always keeps its own share;
//   - a symmetric process has a symmetric Prob;
//   - Assumption 2: the expected graph is strongly connected;
//   - Assumption 6: δ̄_ij > 0 ⇔ δ̄_ji > 0, which the hyper-gradient estimate
//     needs because information flows back along each link;
//   - fixed Mixing, if any: N×N, nonnegative, rows summing to 1, zero
//     where there is no link, and only deterministic links (Prob 0 or 1),
//     since the fixed rows could not sum to 1 over a random receiver set.
//
// Errors name the clients involved. Build calls Validate before returning.
func (nw *Network) Validate() error {
	n := nw.N
	if n < 2 {
		return fmt.Errorf("graph: n must be at least 2, got %d", n)
	}
	if nw.Prob == nil && nw.out != nil {
		return nw.validateSparse()
	}
	if len(nw.Prob) != n {
		return fmt.Errorf("graph: Prob has %d rows, want n=%d", len(nw.Prob), n)
	}
	for i, row := range nw.Prob {
		if len(row) != n {
			return fmt.Errorf("graph: Prob row %d has %d entries, want n=%d", i, len(row), n)
		}
		for j, p := range row {
			if !(p >= 0 && p <= 1) {
				return fmt.Errorf("graph: δ̄ of edge %d→%d is %g, must be in [0, 1]", i, j, p)
			}
		}
		if row[i] != 1 {
			return fmt.Errorf("graph: δ̄ of self-loop %d→%d is %g, must be 1 (a client always reaches itself)", i, i, row[i])
		}
	}
	if nw.Symmetric {
		for i := range n {
			for j := i + 1; j < n; j++ {
				if nw.Prob[i][j] != nw.Prob[j][i] {
					return fmt.Errorf("graph: symmetric network has δ̄=%g on edge %d→%d but δ̄=%g on %d→%d",
						nw.Prob[i][j], i, j, nw.Prob[j][i], j, i)
				}
			}
		}
	}
	if err := nw.checkStronglyConnected(); err != nil {
		return err
	}
	for i := range n {
		for j := range n {
			if nw.Prob[i][j] > 0 && nw.Prob[j][i] == 0 {
				return fmt.Errorf("graph: assumption 6 violated: edge %d→%d has δ̄=%g but %d→%d has δ̄=0",
					i, j, nw.Prob[i][j], j, i)
			}
		}
	}
	if nw.Mixing != nil {
		return nw.checkMixing()
	}
	return nil
}

// checkStronglyConnected verifies Assumption 2 with one search from client 0
// along the links and one against them: a digraph is strongly connected
// exactly when every client reaches 0 and 0 reaches every client.
func (nw *Network) checkStronglyConnected() error {
	if miss := nw.unreached(true); len(miss) > 0 {
		return fmt.Errorf("graph: expected graph is not strongly connected: clients %s cannot reach client 0", list(miss))
	}
	if miss := nw.unreached(false); len(miss) > 0 {
		return fmt.Errorf("graph: expected graph is not strongly connected: client 0 cannot reach clients %s", list(miss))
	}
	return nil
}

// unreached returns, ascending, the clients not connected to client 0 by
// a path of links with δ̄ > 0: paths into 0 when reverse, out of 0 otherwise.
func (nw *Network) unreached(reverse bool) []int {
	var neighbours func(v int, visit func(u int))
	if nw.Prob == nil {
		neighbours = nw.sparseNeighbours(reverse)
	} else {
		neighbours = func(v int, visit func(u int)) {
			for u := range nw.N {
				p := nw.Prob[v][u]
				if reverse {
					p = nw.Prob[u][v]
				}
				if p > 0 {
					visit(u)
				}
			}
		}
	}
	seen := make([]bool, nw.N)
	seen[0] = true
	stack := []int{0}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		neighbours(v, func(u int) {
			if !seen[u] {
				seen[u] = true
				stack = append(stack, u)
			}
		})
	}
	var miss []int
	for u, ok := range seen {
		if !ok {
			miss = append(miss, u)
		}
	}
	return miss
}

// checkMixing validates fixed push weights against Prob.
func (nw *Network) checkMixing() error {
	const tol = 1e-9
	if len(nw.Mixing) != nw.N {
		return fmt.Errorf("graph: Mixing has %d rows, want n=%d", len(nw.Mixing), nw.N)
	}
	for i, row := range nw.Mixing {
		if len(row) != nw.N {
			return fmt.Errorf("graph: Mixing row %d has %d entries, want n=%d", i, len(row), nw.N)
		}
		sum := 0.0
		for j, w := range row {
			p := nw.Prob[i][j]
			switch {
			case !(w >= 0):
				return fmt.Errorf("graph: mixing weight %d→%d is %g, must be nonnegative", i, j, w)
			case w > 0 && p == 0:
				return fmt.Errorf("graph: mixing weight %d→%d is %g but the link does not exist", i, j, w)
			case p > 0 && p < 1:
				return fmt.Errorf("graph: fixed mixing weights need deterministic links, but edge %d→%d has δ̄=%g", i, j, p)
			}
			sum += w
		}
		if math.Abs(sum-1) > tol {
			return fmt.Errorf("graph: mixing weights of sender %d sum to %g, want 1", i, sum)
		}
	}
	return nil
}

// list formats client indices for an error message, eliding long lists.
func list(c []int) string {
	const show = 10
	var b strings.Builder
	b.WriteByte('[')
	for k, v := range c {
		if k == show {
			fmt.Fprintf(&b, " … %d more", len(c)-show)
			break
		}
		if k > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, v)
	}
	b.WriteByte(']')
	return b.String()
}
