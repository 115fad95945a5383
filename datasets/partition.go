package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"hgpsim/internal/rng"
)

// Federated partitioning of a real data set, following the EMNIST setup of
// the cooperative PDBO paper (Appendix A.1), itself after Marfoq et al.,
// "Federated multi-task learning under a mixture of distributions" (FedEM):
//
//  1. keep a fraction of the data set (10% in the paper), Subsample;
//  2. give each label's examples to the n clients in proportions drawn from
//     Dirichlet(α) (α = 0.4), DirichletPartition;
//  3. optionally split the clients into clusters that normalize their inputs
//     with different means and deviations, ClusterNormalize;
//  4. split each client's examples into test (20%) and the rest, the rest
//     into train and validation 3:1, SplitClient.
//
// Partition runs all four steps on the pooled train and test sets of a
// source, since the paper re-splits every client's share itself.

// minClientExamples is the fewest examples DirichletPartition leaves any
// client: three, so that SplitClient can give every client a non-empty
// train, validation and test set.
const minClientExamples = 3

// maxDirichletDraws bounds how many times DirichletPartition redraws all its
// proportions before giving up on leaving every client minClientExamples.
const maxDirichletDraws = 1000

// minClusterStd keeps a cluster's normalization from dividing by almost 0.
const minClusterStd = 0.05

// Subsample returns about frac of d's rows, drawn uniformly without
// replacement within each label (stratified), so the label frequencies of the
// result match d's up to rounding: label c keeps round(frac·n_c) of its n_c
// rows. The chosen rows keep their order in d. frac must lie in (0, 1]; the
// result is a fresh copy even for frac = 1.
//
// Labels are visited in increasing order, each consuming draws from r.
func Subsample(d *Dataset, frac float64, r *rand.Rand) *Dataset {
	d.CheckShape()
	if !(frac > 0 && frac <= 1) {
		panic(fmt.Sprintf("datasets: Subsample fraction %v, must be in (0, 1]", frac))
	}
	return gather([]*Dataset{d}, d.C, stratifiedSample(d.Y, d.C, frac, r))
}

// DirichletPartition splits d's rows among n clients with label skew: for
// each label c, its rows are shuffled and cut into n consecutive pieces of
// sizes round(p_k·n_c) (cumulatively), with p ~ Dirichlet(α, …, α) drawn
// afresh per label. Small α gives clients few labels; large α gives every
// client nearly d's label frequencies.
//
// Every client must end up with at least 3 rows (enough for SplitClient to
// fill train, validation and test). When a draw leaves a client with fewer,
// all proportions are drawn again, up to 1000 times, and then an error naming
// n and α is returned; it is also returned at once when d has fewer than
// 3·n rows, and for n < 1 or α not a finite positive number.
//
// The result holds each client's row indices into d, in increasing order;
// every row of d belongs to exactly one client.
func DirichletPartition(d *Dataset, n int, alpha float64, r *rand.Rand) ([][]int, error) {
	d.CheckShape()
	switch {
	case n < 1:
		return nil, fmt.Errorf("datasets: Dirichlet partition into n = %d clients, must be >= 1", n)
	case math.IsNaN(alpha) || math.IsInf(alpha, 0) || alpha <= 0:
		return nil, fmt.Errorf("datasets: Dirichlet partition with α = %v, must be finite and > 0", alpha)
	}
	return dirichletSplit(d.Y, d.C, n, alpha, r)
}

// dirichletSplit is DirichletPartition on the labels y alone.
func dirichletSplit(y []int, c, n int, alpha float64, r *rand.Rand) ([][]int, error) {
	if n > len(y)/minClientExamples { // len(y) < 3n, without overflow
		return nil, fmt.Errorf("datasets: Dirichlet partition into n = %d clients needs at least %d examples (%d per client), have %d",
			n, minClientExamples*n, minClientExamples, len(y))
	}
	byLabel := groupByLabel(y, c)
	p := make([]float64, n)
	clients := make([][]int, n)
	for range maxDirichletDraws {
		for k := range clients {
			clients[k] = clients[k][:0]
		}
		for _, rows := range byLabel {
			if len(rows) == 0 {
				continue
			}
			perm := slices.Clone(rows)
			r.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
			dirichlet(p, alpha, r)
			m := float64(len(perm))
			var cum float64
			lo := 0
			for k := range n {
				cum += p[k]
				hi := int(math.Round(cum * m))
				if k == n-1 {
					hi = len(perm) // rounding must not lose the last rows
				}
				hi = min(max(hi, lo), len(perm))
				clients[k] = append(clients[k], perm[lo:hi]...)
				lo = hi
			}
		}
		if minLen(clients) >= minClientExamples {
			for k := range clients {
				slices.Sort(clients[k])
			}
			return clients, nil
		}
	}
	return nil, fmt.Errorf("datasets: Dirichlet partition of %d examples into n = %d clients with α = %v: "+
		"after %d draws some client still had fewer than %d examples; use fewer clients, a larger α or more data",
		len(y), n, alpha, maxDirichletDraws, minClientExamples)
}

// minLen returns the length of the shortest slice.
func minLen(s [][]int) int {
	m := math.MaxInt
	for _, v := range s {
		m = min(m, len(v))
	}
	return m
}

// Normalization is the input transform x' = (x − Mean)/Std of one cluster.
type Normalization struct{ Mean, Std float64 }

// drawNormalizations draws the clusters' parameters: Mean ~ U[0, 1) and
// Std = max(U[0, 1), 0.05), in that order for cluster 0, 1, ….
func drawNormalizations(clusters int, r *rand.Rand) []Normalization {
	out := make([]Normalization, clusters)
	for k := range out {
		out[k].Mean = r.Float64()
		out[k].Std = max(r.Float64(), minClusterStd)
	}
	return out
}

// clusterOf returns the cluster of client i of n when k clusters take the
// clients in order, in sizes that differ by at most one.
func clusterOf(i, n, k int) int { return i * k / n }

// apply transforms every feature of d: in place when d is float64, by a
// new table when it is coded.
func (nm Normalization) apply(d *Dataset) {
	d.transform(func(v float64) float64 { return (v - nm.Mean) / nm.Std })
}

// ClusterNormalize gives clients heterogeneous input distributions, as in the
// EMNIST experiment of the cooperative PDBO paper (Appendix A.1): "clusters
// are equally separated into three clusters which use mean and variance for
// the normalization of inputs … sampled … independently from the uniform
// distribution with range [0, 1]".
//
// Our reading: the clients (the paper's "clusters" are the agents) are cut,
// in client order, into the given number of clusters of sizes that differ by
// at most one (client i of n is in cluster ⌊i·k/n⌋). Cluster k draws one
// scalar Mean_k ~ U[0, 1) and one scalar Std_k ~ U[0, 1), and every feature
// of each of its clients' examples becomes x' = (x − Mean_k)/Std_k. The
// paper's "variance" is taken to be the deviation argument of the usual
// normalization transform (torchvision's Normalize(mean, std)), since that is
// what such a transform divides by; Std_k is floored at 0.05 so that no
// cluster's inputs blow up by more than a factor of 20.
//
// clients holds each client's row indices into d, as DirichletPartition
// returns them; clusters must lie in [1, len(clients)]. The result holds one
// fresh, transformed Dataset per client (rows in the order given) and the
// clusters' parameters, drawn from r in cluster order (Mean, then Std).
func ClusterNormalize(d *Dataset, clients [][]int, clusters int, r *rand.Rand) ([]*Dataset, []Normalization, error) {
	d.CheckShape()
	if clusters < 1 || clusters > len(clients) {
		return nil, nil, fmt.Errorf("datasets: %d clusters for %d clients, must be in [1, %d]", clusters, len(clients), len(clients))
	}
	norms := drawNormalizations(clusters, r)
	out := make([]*Dataset, len(clients))
	for i, rows := range clients {
		out[i] = gather([]*Dataset{d}, d.C, rows)
		norms[clusterOf(i, len(clients), clusters)].apply(out[i])
	}
	return out, norms, nil
}

// SplitClient splits one client's rows of d (nil: all rows) at random into
// test, train and validation sets: test gets round(testFrac·m) of the m rows,
// and of the rest train gets round(trainToVal·rest), validation the
// remainder. The paper's values are testFrac = 0.2 and trainToVal = 0.75
// (train:val = 3:1).
//
// With m >= 3 every split gets at least one row (sizes are clamped after
// rounding). With m < 3 every row goes to Train and Val and Test are empty
// Datasets (N = 0, same D and C), which a model cannot take a loss over;
// callers needing all three must refuse such a client. DirichletPartition
// never produces one.
//
// testFrac and trainToVal must lie in (0, 1); anything else is a programmer
// error and panics. The rows of each split keep their order in d. r is used
// for one shuffle of the rows.
func SplitClient(d *Dataset, rows []int, testFrac, trainToVal float64, r *rand.Rand) ClientData {
	d.CheckShape()
	if !(testFrac > 0 && testFrac < 1) || !(trainToVal > 0 && trainToVal < 1) {
		panic(fmt.Sprintf("datasets: SplitClient with testFrac = %v, trainToVal = %v; both must be in (0, 1)", testFrac, trainToVal))
	}
	if rows == nil {
		rows = make([]int, d.N)
		for i := range rows {
			rows[i] = i
		}
	}
	parts := []*Dataset{d}
	tr, va, te := splitRows(rows, testFrac, trainToVal, r)
	return ClientData{Train: gather(parts, d.C, tr), Val: gather(parts, d.C, va), Test: gather(parts, d.C, te)}
}

// splitRows is SplitClient on row indices.
func splitRows(rows []int, testFrac, trainToVal float64, r *rand.Rand) (train, val, test []int) {
	perm := slices.Clone(rows)
	r.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
	m := len(perm)
	if m < 3 {
		slices.Sort(perm)
		return perm, []int{}, []int{}
	}
	nTest := min(max(int(math.Round(testFrac*float64(m))), 1), m-2)
	rest := m - nTest
	nTrain := min(max(int(math.Round(trainToVal*float64(rest))), 1), rest-1)
	test, train, val = perm[:nTest], perm[nTest:nTest+nTrain], perm[nTest+nTrain:]
	slices.Sort(test)
	slices.Sort(train)
	slices.Sort(val)
	return train, val, test
}

// PartitionSpec describes how Partition turns a source's data into clients.
// The cooperative PDBO paper's EMNIST setting is
//
//	PartitionSpec{Clients: 100, Fraction: 0.1, Alpha: 0.4, Clusters: 3, TestFrac: 0.2, TrainFrac: 0.75}
type PartitionSpec struct {
	Clients  int     // number of clients, >= 1
	Fraction float64 // share of the pooled data kept, in (0, 1]
	Alpha    float64 // Dirichlet label-skew concentration, finite and > 0
	// Clusters is the number of input-normalization clusters: 0 for none
	// (features stay as loaded), else in [1, Clients]; the paper uses 3.
	Clusters  int
	TestFrac  float64 // share of each client's data used for test, in (0, 1)
	TrainFrac float64 // share of the rest used for train (rest: val), in (0, 1)
}

// validate reports every field of s that is out of range, joined.
func (s PartitionSpec) validate() error {
	var errs []error
	if s.Clients < 1 {
		errs = append(errs, fmt.Errorf("field Clients = %d, must be >= 1", s.Clients))
	}
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	if bad(s.Fraction) || s.Fraction <= 0 || s.Fraction > 1 {
		errs = append(errs, fmt.Errorf("field Fraction = %v, must be in (0, 1]", s.Fraction))
	}
	if bad(s.Alpha) || s.Alpha <= 0 {
		errs = append(errs, fmt.Errorf("field Alpha = %v, must be finite and > 0", s.Alpha))
	}
	if s.Clusters < 0 || (s.Clients >= 1 && s.Clusters > s.Clients) {
		errs = append(errs, fmt.Errorf("field Clusters = %d, must be 0 (no normalization) or in [1, Clients = %d]", s.Clusters, s.Clients))
	}
	if bad(s.TestFrac) || s.TestFrac <= 0 || s.TestFrac >= 1 {
		errs = append(errs, fmt.Errorf("TestFrac = %v, must be in (0, 1)", s.TestFrac))
	}
	if bad(s.TrainFrac) || s.TrainFrac <= 0 || s.TrainFrac >= 1 {
		errs = append(errs, fmt.Errorf("TrainFrac = %v, must be in (0, 1)", s.TrainFrac))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("datasets: invalid PartitionSpec: %w", err)
	}
	return nil
}

// Partition builds one ClientData per client from a source's train and test
// sets (test may be nil), following the steps listed above: pool the two
// sets, keep spec.Fraction of the pool (Subsample), Dirichlet-partition it
// over spec.Clients (DirichletPartition), normalize the clusters' inputs if
// spec.Clusters > 0 (ClusterNormalize), and split each client's share
// (SplitClient). Rows are copied once, straight into the clients' datasets;
// the pool is never materialized. Every client's datasets have C equal to
// the larger C of train and test.
//
// Randomness: the subsample, the Dirichlet proportions and the clusters'
// parameters come, in that order, from rng.New(seed, rng.Global,
// rng.PurposePartition); client i's split from rng.New(seed, i,
// rng.PurposePartition). The same inputs and seed give identical bytes.
//
// Errors name every field of spec that is out of range, or report that
// train and test disagree in D or that the data cannot give every client
// enough examples.
func Partition(spec PartitionSpec, train, test *Dataset, seed uint64) ([]ClientData, error) {
	return PartitionBlock(spec, train, test, seed, 0, spec.Clients)
}

// PartitionBlock is Partition for clients lo … hi−1 only (element k is
// client lo+k, with the same bits): the subsample, the Dirichlet split and
// the clusters are drawn whole, on labels and indices, and only the
// block's rows are copied.
func PartitionBlock(spec PartitionSpec, train, test *Dataset, seed uint64, lo, hi int) ([]ClientData, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	checkBlock(spec.Clients, lo, hi)
	if train == nil {
		return nil, errors.New("datasets: Partition: nil train set")
	}
	parts := []*Dataset{train}
	if test != nil {
		if test.D != train.D {
			return nil, fmt.Errorf("datasets: Partition: train set has D = %d features, test set D = %d", train.D, test.D)
		}
		parts = append(parts, test)
	}
	c := 0
	var y []int // labels of the pool, train rows first
	for _, p := range parts {
		p.CheckShape()
		c = max(c, p.C)
		y = append(y, p.Y...)
	}

	g := rng.New(seed, rng.Global, rng.PurposePartition)
	kept := stratifiedSample(y, c, spec.Fraction, g)
	keptY := make([]int, len(kept))
	for k, i := range kept {
		keptY[k] = y[i]
	}
	clients, err := dirichletSplit(keptY, c, spec.Clients, spec.Alpha, g)
	if err != nil {
		return nil, fmt.Errorf("%w (after keeping Fraction = %v of %d pooled examples)", err, spec.Fraction, len(y))
	}
	var norms []Normalization
	if spec.Clusters > 0 {
		norms = drawNormalizations(spec.Clusters, g)
	}

	out := make([]ClientData, hi-lo)
	for k := range out {
		i := lo + k
		local := clients[i]
		rows := make([]int, len(local))
		for m, j := range local {
			rows[m] = kept[j]
		}
		r := rng.New(seed, i, rng.PurposePartition)
		tr, va, te := splitRows(rows, spec.TestFrac, spec.TrainFrac, r)
		cd := ClientData{Train: gather(parts, c, tr), Val: gather(parts, c, va), Test: gather(parts, c, te)}
		if norms != nil {
			nm := norms[clusterOf(i, spec.Clients, spec.Clusters)]
			nm.apply(cd.Train)
			nm.apply(cd.Val)
			nm.apply(cd.Test)
		}
		out[k] = cd
	}
	return out, nil
}

// groupByLabel returns the indices of y with each label, in order. A label
// outside [0, c) means a corrupt Dataset and panics.
func groupByLabel(y []int, c int) [][]int {
	out := make([][]int, c)
	for i, l := range y {
		if l < 0 || l >= c {
			panic(fmt.Sprintf("datasets: label %d of row %d outside [0, %d)", l, i, c))
		}
		out[l] = append(out[l], i)
	}
	return out
}

// stratifiedSample returns round(frac·n_c) indices of each label c of y,
// drawn uniformly without replacement, in increasing order.
func stratifiedSample(y []int, c int, frac float64, r *rand.Rand) []int {
	var out []int
	for _, rows := range groupByLabel(y, c) {
		k := int(math.Round(frac * float64(len(rows))))
		// Partial Fisher–Yates: the first k slots become a uniform k-subset.
		for a := range k {
			b := a + r.IntN(len(rows)-a)
			rows[a], rows[b] = rows[b], rows[a]
		}
		out = append(out, rows[:k]...)
	}
	slices.Sort(out)
	return out
}

// gather copies the given rows of the row-wise concatenation of parts (which
// share D) into a new Dataset with c classes, coded when the parts are all
// coded with the same table.
func gather(parts []*Dataset, c int, rows []int) *Dataset {
	out := newLike(parts, len(rows), c)
	for k, i := range rows {
		j := i
		p := 0
		for p < len(parts) && j >= parts[p].N {
			j -= parts[p].N
			p++
		}
		if i < 0 || p == len(parts) {
			panic(fmt.Sprintf("datasets: row %d out of range", i))
		}
		out.copyRows(k, parts[p], j, j+1)
		out.Y[k] = parts[p].Y[j]
	}
	return out
}
