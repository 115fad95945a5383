// Package nn holds convolutional networks over whole minibatches with exact
// gradients and Hessian-vector products, for the models of hgpsim.
//
// # Layout
//
// A Net maps each of n samples to C class logits. Inputs A hold the samples
// one after another, each flattened in PyTorch's NCHW order (channel, row,
// column); logits Z are n × C row-major. Every intermediate activation has
// the same per-sample layout, so a Net's weights can be compared with a
// PyTorch module's directly.
//
// The parameters x are one flat []F: the layers' parameters in
// order, each layer's weight then its bias as PyTorch's parameters() lists
// them — a convolution's weight [out][in][kh][kw], a dense layer's
// [out][in], a group norm's scale [C] then shift [C].
//
// # The four primitives
//
// The bilevel problems of package models need, per sample b, the logits
// Z_b(x), and three derivatives of them: the Jacobian-vector product
// J_b·u (JVP, the forward R-operator), the vector-Jacobian product J_bᵀG_b
// (VJP, backpropagation) and the derivative of that backpropagation along
// u (VJPR, forward-over-reverse):
//
//	VJPR = Σ_b [J_bᵀ R{G_b} + Σ_j G_bj ∇²Z_bj·u],
//
// which with G = ∂ℓ/∂Z and R{G} = ∇²_Z ℓ·J·u is the Hessian-vector product
// of a loss ℓ(Z) (Pearlmutter's R-operator: every quantity q of the
// forward and backward passes gets R{q}, its derivative along u). A loss
// is built from them in the same order: Logits, then JVP(u) when a
// Hessian-vector product is wanted, then VJP(G) and VJPR(u, G, R{G}). The
// passes reuse what the previous ones keep: JVP the activations of
// Logits, VJPR those, the tangents of JVP and — when G is the same — the
// backpropagation of G by an earlier VJP or VJPR, so Hessian-vector
// products along many directions at one point cost one Logits and then a
// JVP and a VJPR each. Net.Loss, Net.Grad and Net.HVP are the mean
// cross-entropy built this way. VJPInput and VJPRInput also give the
// gradient with respect to the inputs A and its derivative along u, for a
// net fed by another net's outputs: the hyper-representation problem of
// package models runs a CNN's body and its last dense layers as two Nets
// that way.
//
// Each layer supplies its forward pass, its backward pass (input gradient,
// parameter gradient added), and their tangents: R{y} from R{x} and u, and
// R{gx}, R{gw} from gy, R{gy}, R{x} and u — the torch.func jvp(grad)
// structure, written out by hand. ReLU and max pooling are piecewise
// linear: their second derivative is 0 where it exists, and every pass
// routes through the same mask (x > 0) or the same selected element (the
// first maximum of the window in row-major order, so ties go to the lowest
// index). At a kink the results are those of the piece the forward pass
// chose, as in PyTorch.
//
// # Speed
//
// Convolutions are matrix products of the weights with each sample's patch
// matrix (im2col), dense layers one product over the batch, all through
// internal/gemm, whose kernels fix the summation order. Each product takes
// the form the kernels run fastest for its shape: a convolution with many
// patch rows (K = C·KH·KW ≥ 64) runs its forward passes in dot order on
// the patches laid out as rows, one with few (a first layer) forms its
// weight gradient in dot order, input gradients take the transposed
// weights with the output gradients padded to whole kernel tiles, and the
// R-passes join their two products into one over twice the depth where
// they share an operand. Samples are
// processed in order and nothing runs in parallel inside a Net, so results
// are bit-identical at any GOMAXPROCS. A Net keeps its workspaces, sized
// for the largest batch it has seen, and does not allocate after that. A
// ReLU directly followed by a max pool is computed after the pool, on a
// quarter of the values for 2×2 windows: the two commute, with the same
// outputs and derivatives. A group norm directly followed by a 2×2 max
// pool runs with it plane by plane, and with a convolution before them a
// few samples at a time, so that the norm's output and its gradient are
// never written out whole and the large activations around it are read
// from cache; each value is computed as by the layers one after another.
//
// # Precision
//
// A Net[F] computes in F, float64 or float32: parameters, inputs,
// activations, their tangents, gradients, Hessian-vector products and
// every workspace are F, and the matrix products sum in F in the orders
// internal/gemm fixes for both. Tanh, exp, log1p and sqrt, which the
// standard library has in float64 only, are evaluated in float64 and
// rounded to F: deterministic, and as accurate as F holds.
//
// The loss stays float64 in a float32 net: Net.Loss and Net.Grad sum the
// samples' cross-entropies in float64 (from the F logits) and return a
// float64, and the L2 coefficient is a float64, rounded to F where it
// scales a gradient. Losses are summed over batches, clients and rounds
// and compared across them (convergence tests, reported curves), where
// float32's seven digits would run out; a gradient is only as precise as
// the F parameters it updates anyway. With F = float64 every operation is
// the one written before Net was generic, so float64 results are the same
// bits.
//
// A float32 net is not a rounded float64 one step for step: its
// convolutions pick the product forms the float32 kernels run fastest
// (chain order where K, the patch rows, is not a multiple of 16, weight
// gradients in dot order where the output channels are not a multiple of
// 8), and Net.Grad sums ‖x‖² in eight interleaved partial sums. The
// patch, pool, bias, ReLU and group norm passes (and float32's L2 passes)
// run AVX kernels in both types that do what their Go loops do, value by
// value in the same order, so every kernel path (HGPSIM_NOAVX2=1
// included) gives the same bits.
//
// # Normalization
//
// Batch normalization with batch statistics couples the samples of a batch:
// a sample's logits would depend on which other samples share its
// minibatch, and the per-sample losses that the bilevel problems weight
// would no longer be per sample. GroupNorm normalizes each sample on its
// own (over groups of channels and all positions) with a per-channel scale
// and shift, the same parameters batch norm has; the "node-weighting"
// preset uses it with one group per channel in place of the paper's batch
// norms: per sample, the statistics batch norm takes per channel.
//
// # Errors
//
// A layer stack a user can get wrong (non-positive sizes, a kernel larger
// than its input, a final layer whose size is not the number of classes,
// more than MaxParams parameters) is an error from New and Plan; Plan and
// Info.Memory size a network without building it. Slices of the wrong
// length and passes called out of order are programmer errors and panic.
//
// It may import internal packages (gemm) and the standard library only.
package nn
