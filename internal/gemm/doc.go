// Package gemm holds the matrix-product kernels of hgpsim's models.
//
// Every kernel fixes the order in which each output element is summed, so
// its result does not depend on blocking, vector width or the machine: the
// register-blocked AVX2 kernels and the pure-Go fallbacks give the same
// bits. Two orders are used, both the orders of the level-1 kernels the
// models were first written with, so that moving a model onto these
// kernels changes no result:
//
//   - dot order (DotNT): the order of gonum's floats.Dot — four partial
//     sums s_l over the elements k ≡ l (mod 4) of the whole blocks of four,
//     the one to three remaining elements added to s_0 in order, then
//     (s_0 + s_2) + (s_1 + s_3);
//   - chain order (AccNN, AccTN, AccNT): one running sum per output, which
//     starts at the output's old value and takes the products in increasing
//     k — what a loop of vec.AddScaled over k computes.
//
// Each product is rounded and then added (never a fused multiply-add): on
// this project's machines (AMD Zen) multiplies and adds issue on separate
// pipes, so the unfused form loses no peak throughput.
//
// "The same bits" holds for every result that is not a NaN; a NaN result is
// a NaN in every kernel, but its sign and payload may differ, because which
// NaN operand propagates depends on operand order, and the Go compiler may
// swap the operands of a commutative product or sum.
//
// Matrices are row-major slices with a leading dimension (the distance
// between rows). Dimension mismatches panic. The kernels do not allocate and
// do not start goroutines.
//
// Package gemm imports only the standard library and internal packages.
package gemm
