package nn

import "hgpsim/internal/gemm"

// rowOrderScratch holds the interleaved operands of a row-order dense
// layer's rbackward (Spec.RowOrder).
type rowOrderScratch[F gemm.Float] struct {
	gg []F // 2n × Out: R{gY}_b, gY_b, sample after sample
	xx []F // 2n × In: X_b, R{X}_b, sample after sample
	gi []F // n × 2·Out: (gY_bj, R{gY}_bj) pairs
	wu []F // 2·Out × In: U_j, W_j, output after output
}

func (s *rowOrderScratch[F]) reserve(n, ni, no int) {
	s.gg = make([]F, 2*n*no)
	s.xx = make([]F, 2*n*ni)
	s.gi = make([]F, 2*n*no)
	if len(s.wu) < 2*no*ni {
		s.wu = make([]F, 2*no*ni)
	}
}

// rbackwardRows is rbackward with the sums of a loop over samples: each
// output of a product takes its terms in the loop's order, which the
// interleaved operands give one matrix product.
func (l *dense[F]) rbackwardRows(gx, rgx, rgw, gy, rgy, x, rx, w, u []F, n int) {
	ni, no := l.ni, l.no
	wt, ut := w[:no*ni], u[:no*ni]
	rgwt := rgw[:no*ni]
	if rx == nil {
		gemm.AccTN(no, ni, n, rgy, no, x, ni, rgwt, ni)
	} else {
		// R{gW} += Σ_b R{gY}_bᵀX_b + gY_bᵀR{X}_b, per sample in turn.
		s := l.ord
		for b := range n {
			copy(s.gg[2*b*no:(2*b+1)*no], rgy[b*no:(b+1)*no])
			copy(s.gg[(2*b+1)*no:(2*b+2)*no], gy[b*no:(b+1)*no])
			copy(s.xx[2*b*ni:(2*b+1)*ni], x[b*ni:(b+1)*ni])
			copy(s.xx[(2*b+1)*ni:(2*b+2)*ni], rx[b*ni:(b+1)*ni])
		}
		gemm.AccTN(no, ni, 2*n, s.gg, no, s.xx, ni, rgwt, ni)
	}
	addColumnSums(rgw[no*ni:], rgy, n)
	if gx != nil {
		l.inputGrad(gx, n, gy, wt)
	}
	if rgx != nil {
		// R{gX} = Σ_j gY_j·U_j + R{gY}_j·W_j, per output in turn.
		s := l.ord
		for b := range n {
			for j := range no {
				s.gi[2*(b*no+j)] = gy[b*no+j]
				s.gi[2*(b*no+j)+1] = rgy[b*no+j]
			}
		}
		for j := range no {
			copy(s.wu[2*j*ni:(2*j+1)*ni], ut[j*ni:(j+1)*ni])
			copy(s.wu[(2*j+1)*ni:(2*j+2)*ni], wt[j*ni:(j+1)*ni])
		}
		clear(rgx[:n*ni])
		gemm.AccNN(n, ni, 2*no, s.gi, 2*no, s.wu, ni, rgx, ni)
	}
}
