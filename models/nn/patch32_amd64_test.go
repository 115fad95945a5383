package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"hgpsim/internal/cpuid"
)

// special32 returns n float32s, a quarter of them special values (signed
// zeros, infinities, NaNs with payloads, subnormals, the extremes) and the
// rest of random magnitude and sign, so that a kernel that moved or added
// values other than bit for bit would show.
func special32(r *rand.Rand, n int) []float32 {
	sp := []float32{
		0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffa00000),
		math.Float32frombits(1), -math.Float32frombits(0x007fffff),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1, -1,
	}
	v := make([]float32, n)
	for i := range v {
		if r.IntN(4) == 0 {
			v[i] = sp[r.IntN(len(sp))]
			continue
		}
		v[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
	}
	return v
}

func sameBits32(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

func needAVX(t *testing.T) {
	t.Helper()
	if !cpuid.Get().AVX2 {
		t.Skip("the processor has no AVX2: the float32 patch kernels never run here")
	}
}

// copyRuns32 and addRuns32 give the bits of the Go loops of im2colDense and
// col2imDense for every run width (whole vectors of 8, a 4-wide part and
// scalar tails) and stride, and touch nothing between the runs.
func TestRuns32MatchGoLoops(t *testing.T) {
	needAVX(t)
	r := rand.New(rand.NewPCG(3, 1))
	for w := 1; w <= 27; w++ {
		for n := 1; n <= 3; n++ {
			ds, ss := w+r.IntN(5), w+r.IntN(5)
			src := special32(r, (n-1)*ss+w)
			dst := special32(r, (n-1)*ds+w+3)
			want, got := append([]float32(nil), dst...), append([]float32(nil), dst...)
			for i := range n {
				copy(want[i*ds:i*ds+w], src[i*ss:i*ss+w])
			}
			copyRuns32(n, w, &got[0], ds, &src[0], ss)
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("copyRuns32 w=%d n=%d strides %d, %d: element %d is %x, want %x",
					w, n, ds, ss, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
			want, got = append(want[:0], dst...), append(got[:0], dst...)
			for i := range n {
				d := want[i*ds : i*ds+w]
				for k, v := range src[i*ss : i*ss+w] {
					d[k] += v
				}
			}
			addRuns32(n, w, &got[0], ds, &src[0], ss)
			if i := sameBits32(got, want); i >= 0 {
				t.Fatalf("addRuns32 w=%d n=%d strides %d, %d: element %d is %x, want %x",
					w, n, ds, ss, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}

// patchRows32 writes im2rowDense's Go rows for 3- and 5-wide runs, any
// number of runs and positions, and leaves the rest of each row of the
// leading dimension alone.
func TestPatchRows32MatchesGoLoop(t *testing.T) {
	needAVX(t)
	r := rand.New(rand.NewPCG(4, 1))
	for _, kw := range []int{3, 5} {
		for nr := 1; nr <= 7; nr++ {
			for nox := 1; nox <= 5; nox++ {
				runs := make([]int, nr)
				for i := 1; i < nr; i++ {
					runs[i] = runs[i-1] + kw + r.IntN(4)
				}
				ld := nr*kw + r.IntN(4)
				src := special32(r, nox-1+runs[nr-1]+kw)
				dst := special32(r, (nox-1)*ld+nr*kw)
				want, got := append([]float32(nil), dst...), append([]float32(nil), dst...)
				for t := range nox {
					for i, o := range runs {
						copy(want[t*ld+kw*i:t*ld+kw*i+kw], src[t+o:t+o+kw])
					}
				}
				patchRows32(kw, nox, nr, &got[0], ld, &src[0], &runs[0])
				if i := sameBits32(got, want); i >= 0 {
					t.Fatalf("kw=%d nr=%d nox=%d ld=%d: element %d is %x, want %x",
						kw, nr, nox, ld, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
		}
	}
}
