package gemm

// The kernels in use; the blocked ones replace these assignments.
var (
	dotNT = dotNTRef
	accNN = accNNRef
	accTN = accTNRef
	accNT = accNTRef
)
