package gemm

import "golang.org/x/sys/cpu"

// archImpls lists the assembly implementations of a kernel that this CPU
// can run, whatever HGPSIM_NOAVX2 says: the tests compare them all.
func archImpls(name string) []impl {
	if !cpu.X86.HasAVX2 {
		return nil
	}
	switch name {
	case "DotNT":
		ims := []impl{{"avx2", dotNTAVX2}}
		if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
			ims = append(ims, impl{"avx512", setZMM(false, dotNTAVX512)}, impl{"avx512/zmm", setZMM(true, dotNTAVX512)})
		}
		return ims
	case "AccNN":
		return withZMM([]impl{{"avx2", accNNAVX2}, {"direct", accNNDirect}, {"packed", accNNPacked}})
	case "AccTN":
		return withZMM([]impl{{"avx2", accTNAVX2}, {"direct", accTNDirect}, {"packed", accTNPacked}})
	default:
		return withZMM([]impl{{"avx2", accNTAVX2}})
	}
}

// withZMM runs each chain-order implementation with the 256-bit kernels
// and, where the CPU has AVX-512F (whole or split), again with the 512-bit
// ones ("…/zmm"), whichever the process chose.
func withZMM(ims []impl) []impl {
	var out []impl
	for _, im := range ims {
		out = append(out, impl{im.name, setZMM(false, im.f)})
		if cpu.X86.HasAVX512F {
			out = append(out, impl{im.name + "/zmm", setZMM(true, im.f)})
		}
	}
	return out
}

func setZMM(on bool, k kernel) kernel {
	return func(m, n, kk int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
		old := zmm
		zmm = on
		defer func() { zmm = old }()
		k(m, n, kk, a, lda, b, ldb, c, ldc)
	}
}
