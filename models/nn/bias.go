package nn

// A convolution's per-channel bias over the rows of its output chunks, and
// its gradient, the rows' sums.

import (
	"unsafe"

	"hgpsim/internal/gemm"
	"hgpsim/internal/vec"
)

// setBias writes the bias of each output channel over its row of the
// Out × cols chunk y.
func setBias[F gemm.Float](y, bias []F, cols int) {
	vector32 := patchVector && !vec.Is64[F]() && cols >= 8
	vector64 := patchVector && vec.Is64[F]() && cols >= 4
	for c, v := range bias {
		row := y[c*cols : (c+1)*cols]
		if vector32 {
			fill32(ptr32(row), len(row), float32(v))
			row = row[len(row)&^7:]
		}
		if vector64 {
			fill64(ptr64(row), len(row), float64(v))
			row = row[len(row)&^3:]
		}
		for i := range row {
			row[i] = v
		}
	}
}

// addBias adds the bias of each output channel to its row of the
// Out × cols chunk y.
func addBias[F gemm.Float](y, bias []F, cols int) {
	vector32 := patchVector && !vec.Is64[F]() && cols >= 8
	vector64 := patchVector && vec.Is64[F]() && cols >= 4
	for c, v := range bias {
		row := y[c*cols : (c+1)*cols]
		if vector32 {
			addConst32(ptr32(row), len(row), float32(v))
			row = row[len(row)&^7:]
		}
		if vector64 {
			addConst64(ptr64(row), len(row), float64(v))
			row = row[len(row)&^3:]
		}
		for i := range row {
			row[i] += v
		}
	}
}

// addRowSums adds the sum of the first cols entries of each row of the
// chunk g (leading dimension ld) to gb. With AVX, rows go four at a time
// through sumRows4 (float64) or sumRows4x32 (float32), which run sum's
// four running sums of each in a vector, the four rows' chains side by
// side (alone, one row's chains wait on each addition's latency); the
// loop here adds the last cols mod 4 values and combines them as sum
// does, in F.
func addRowSums[F gemm.Float](gb, g []F, ld, cols int) {
	c := 0
	if patchVector && cols >= 4 {
		for ; c+4 <= len(gb); c += 4 {
			var acc [4][4]F
			_ = g[(c+3)*ld+cols-1] // the kernel's last row
			if vec.Is64[F]() {
				sumRows4(cols/4, ptr64(g[c*ld:]), ld, (*[4][4]float64)(unsafe.Pointer(&acc)))
			} else {
				sumRows4x32(cols/4, ptr32(g[c*ld:]), ld, (*[4][4]float32)(unsafe.Pointer(&acc)))
			}
			for r, a := range acc {
				s0, s1, s2, s3 := a[0], a[1], a[2], a[3]
				for _, v := range g[(c+r)*ld+cols&^3 : (c+r)*ld+cols] {
					s0 += v
				}
				gb[c+r] += (s0 + s1) + (s2 + s3)
			}
		}
	}
	for ; c < len(gb); c++ {
		gb[c] += sum(g[c*ld : c*ld+cols])
	}
}
