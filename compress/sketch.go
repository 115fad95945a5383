package compress

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// CountSketch is the Count-Sketch of Charikar et al. for vectors of R^d: r
// rows of c counters, a bucket hash h_j: [d] → [c] and a sign hash
// s_j: [d] → {±1} per row, S[j, h_j(i)] += s_j(i)·x_i. It is linear
// (the sketch of Σ w_m x_m is Σ w_m S(x_m)), so a server sums the tables
// its clients send; x_i is estimated by the median over rows of
// s_j(i)·S[j, h_j(i)], and heavy hitters by the largest estimates.
//
// The hashes are drawn once from a seed: everyone who builds the sketch
// with the same (d, r, c, seed) has the same operator.
type CountSketch struct {
	d, r, c int
	bucket  []int32 // r×d
	sign    []int8  // r×d
	med     []float64
	scratch []float64
	est     []float64
}

// NewCountSketch returns an r×c sketch of vectors of dimension d with
// hashes drawn from seed. It returns an error for a non-positive size.
func NewCountSketch(d, r, c int, seed uint64) (*CountSketch, error) {
	if d < 1 || r < 1 || c < 1 {
		return nil, fmt.Errorf("compress: count sketch needs d, rows, columns >= 1, got %d, %d, %d", d, r, c)
	}
	if c > math.MaxInt32 {
		return nil, fmt.Errorf("compress: count sketch columns %d too large", c)
	}
	s := &CountSketch{d: d, r: r, c: c, bucket: make([]int32, r*d), sign: make([]int8, r*d),
		med: make([]float64, r), est: make([]float64, d)}
	g := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	for k := range s.bucket {
		s.bucket[k] = int32(g.IntN(c))
		s.sign[k] = int8(2*g.IntN(2) - 1)
	}
	return s, nil
}

// Rows, Cols and Dim return r, c and d.
func (s *CountSketch) Rows() int { return s.r }

// Cols returns c.
func (s *CountSketch) Cols() int { return s.c }

// Dim returns d.
func (s *CountSketch) Dim() int { return s.d }

// Size returns r·c, the numbers a sketch message carries.
func (s *CountSketch) Size() int { return s.r * s.c }

// Add adds w·S(x) to table (length r·c, row-major).
func (s *CountSketch) Add(table []float64, w float64, x []float64) {
	for j := range s.r {
		row := table[j*s.c : (j+1)*s.c]
		b, sg := s.bucket[j*s.d:(j+1)*s.d], s.sign[j*s.d:(j+1)*s.d]
		for i, v := range x {
			if v != 0 {
				row[b[i]] += w * float64(sg[i]) * v
			}
		}
	}
}

// AddSparse adds w·S(x) for the sparse x with the given indices and values.
func (s *CountSketch) AddSparse(table []float64, w float64, idx []int, val []float64) {
	for j := range s.r {
		row := table[j*s.c : (j+1)*s.c]
		b, sg := s.bucket[j*s.d:(j+1)*s.d], s.sign[j*s.d:(j+1)*s.d]
		for k, i := range idx {
			row[b[i]] += w * float64(sg[i]) * val[k]
		}
	}
}

// RowEstimate returns row j's estimate s_j(i)·S[j, h_j(i)] of x_i, unbiased
// over the hashes.
func (s *CountSketch) RowEstimate(table []float64, j, i int) float64 {
	k := j*s.d + i
	return float64(s.sign[k]) * table[j*s.c+int(s.bucket[k])]
}

// Estimate returns the median over rows of the row estimates of x_i.
func (s *CountSketch) Estimate(table []float64, i int) float64 {
	for j := range s.r {
		s.med[j] = s.RowEstimate(table, j, i)
	}
	return median(s.med)
}

// HeavyHitters estimates every coordinate and writes the k of largest
// estimated magnitude (indices ascending, ties to the lower index) into
// idx and val, which it returns.
func (s *CountSketch) HeavyHitters(table []float64, k int, idx []int, val []float64) ([]int, []float64) {
	for i := range s.d {
		s.est[i] = s.Estimate(table, i)
	}
	idx, s.scratch = topIndices(s.est, k, idx, s.scratch)
	val = val[:0]
	for _, i := range idx {
		val = append(val, s.est[i])
	}
	return idx, val
}

// median returns the median of v (the mean of the middle two for an even
// length), reordering v.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return 0.5 * (v[n/2-1] + v[n/2])
}

// SparseEmbedding is the r×d sparse embedding matrix of Corollary 3: column
// i has the single non-zero σ(i) ∈ {±1} in row h(i) ∈ [r], both drawn from
// a seed. Sx costs O(d) and Sᵀw costs O(d).
type SparseEmbedding struct {
	r    int
	row  []int32
	sign []int8
}

// NewSparseEmbedding returns an r×d sparse embedding drawn from seed.
func NewSparseEmbedding(r, d int, seed uint64) (*SparseEmbedding, error) {
	if r < 1 || d < 1 || r > math.MaxInt32 {
		return nil, fmt.Errorf("compress: sparse embedding needs 1 <= rows <= 2³¹ and d >= 1, got %d×%d", r, d)
	}
	e := &SparseEmbedding{r: r, row: make([]int32, d), sign: make([]int8, d)}
	g := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	for i := range d {
		e.row[i] = int32(g.IntN(r))
		e.sign[i] = int8(2*g.IntN(2) - 1)
	}
	return e, nil
}

// Rows returns r.
func (e *SparseEmbedding) Rows() int { return e.r }

// Apply writes dst = S x (len r).
func (e *SparseEmbedding) Apply(dst, x []float64) {
	clear(dst)
	for i, v := range x {
		dst[e.row[i]] += float64(e.sign[i]) * v
	}
}

// ApplyT writes dst = Sᵀw (len d).
func (e *SparseEmbedding) ApplyT(dst, w []float64) {
	for i := range dst {
		dst[i] = float64(e.sign[i]) * w[e.row[i]]
	}
}

// Column writes dst = Sᵀe_k, the k-th row of S as a vector of R^d.
func (e *SparseEmbedding) Column(dst []float64, k int) {
	for i := range dst {
		if int(e.row[i]) == k {
			dst[i] = float64(e.sign[i])
		} else {
			dst[i] = 0
		}
	}
}

// IdentityEmbedding returns the d×d identity as a sparse embedding (for
// tests: the non-iterative estimator with identity sketches is exact).
func IdentityEmbedding(d int) *SparseEmbedding {
	e := &SparseEmbedding{r: d, row: make([]int32, d), sign: make([]int8, d)}
	for i := range d {
		e.row[i] = int32(i)
		e.sign[i] = 1
	}
	return e
}
