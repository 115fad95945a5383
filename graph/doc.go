// Package graph builds the communication networks of hgpsim and realizes
// their edges round by round.
//
// # Model
//
// Clients 0..N-1 exchange messages by push (Sec. 2 of the paper). At
// communication round t — a tick, counted across SGP steps and hyper-gradient
// rounds alike — the link from client i to client j is up when
// δ_{i→j}^{(t)} = 1. Every client always reaches itself: δ_{i→i}^{(t)} = 1.
// Each link is up independently at each tick with a fixed probability
// δ̄_{i→j}, stored in Network.Prob; δ̄ = 0 means there is no link at all and
// δ̄ = 1 a link that never fails. The expected graph {(i, j): δ̄_ij > 0} must
// be strongly connected (Assumption 2) and have every link in both
// directions, possibly with different probabilities (Assumption 6);
// Network.Validate checks both.
//
// A symmetric network draws one value per unordered pair and tick, so that
// δ_{i→j}^{(t)} = δ_{j→i}^{(t)}: this recovers stochastic undirected networks,
// and with all δ̄ ∈ {0, 1} static undirected ones. Otherwise the two
// directions of a pair are independent, a stochastic directed network.
//
// Having realized its receivers, sender i splits what it pushes among them
// with weights p_ij(δ_i) that sum to 1, so the matrix P^{(t)} with
// P_ji = p_ij is column stochastic (Eq. 3). The default rule, the one the
// authors simulate, is uniform over the realized receivers, self included:
// p_ij = δ_{i→j} / Σ_k δ_{i→k}. Its expectation p̄_ij = E[p_ij(δ_i)], which
// the hyper-gradient analysis needs, is computed exactly by
// ExpectedPushWeights.
//
// # Why realization is counter-based
//
// hgpsim must give bit-identical runs for a seed whatever the goroutine
// schedule, and a link's state is needed by several parties: the sender
// (to split its mass), the router (to deliver), and tests. Rather than
// advance a shared generator, whose draws would depend on who asks first,
// Realize computes each link as rng.Uniform(Seed, PurposeEdges, a, b, tick) <
// δ̄ — a pure function of the seed, the link and the tick, with (a, b) the
// ordered pair in a directed network and the sorted pair in a symmetric one.
// Anyone can recompute any round in any order, without state or locks.
//
// # Topologies
//
// Build turns a topology chosen from the Topologies registry into a
// Network. The kinds of App. D are "fully-connected" (every link up always,
// weights 1/N: SGP becomes FedAvg), "static-undirected" (an Erdős–Rényi
// graph with self-loops, redrawn until connected, with fixed doubly
// stochastic weights), "stochastic-undirected" and "stochastic-directed"
// (every pair, respectively every ordered pair, a link with δ̄ drawn once
// from U[DeltaMin, DeltaMax], [0.4, 0.8] in the paper). The other kinds
// (rings, stars, tori, hypercubes, edge lists, …) are for experiments
// beyond the paper; `hgpsim list network` prints them all. A directed ring
// (N > 2) has each link in one direction only and is rejected by Validate
// as an Assumption 6 violation, by design.
//
// # Static mixing weights
//
// A static undirected network uses fixed symmetric doubly stochastic weights
// (Network.Mixing) instead of the uniform rule, which on an irregular graph
// would only be column stochastic. The default is the fastest-mixing Markov
// chain of Boyd, Diaconis & Xiao, which minimizes the second-largest
// eigenvalue modulus of the weight matrix and so the consensus error per
// round; it is what the paper's authors used, following Marfoq et al.
// (2021). It is computed by a smoothed projected subgradient method started
// from the Metropolis–Hastings weights, and takes a few seconds for N = 100.
// Metropolis–Hastings (W_ij = 1/(1 + max(d_i, d_j))) is the cheap
// alternative that every client could compute from its neighbours' degrees
// alone; select it with `weights: metropolis`.
//
// It may import internal packages and gonum; never optim, models or
// anything above them.
package graph
