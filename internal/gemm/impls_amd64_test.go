package gemm

import "golang.org/x/sys/cpu"

// archImpls lists the assembly implementations of a kernel that this CPU
// can run, whatever HGPSIM_NOAVX2 says: the tests compare them all.
func archImpls[F Float](name string) []impl[F] {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return nil
	}
	switch name {
	case "DotNT":
		ims := []impl[F]{{"avx2", dotNTAVX2[F]}}
		if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
			ims = append(ims, impl[F]{"avx512", setZMM(false, dotNTAVX512[F])}, impl[F]{"avx512/zmm", setZMM(true, dotNTAVX512[F])})
		}
		return ims
	case "AccNN":
		return withZMM([]impl[F]{{"avx2", accNNAVX2[F]}, {"direct", accNNDirect[F]}, {"packed", accNNPacked[F]}})
	case "AccTN":
		return withZMM([]impl[F]{{"avx2", accTNAVX2[F]}, {"direct", accTNDirect[F]}, {"packed", accTNPacked[F]}})
	default:
		return withZMM([]impl[F]{{"avx2", accNTAVX2[F]}})
	}
}

// withZMM runs each chain-order implementation with the 256-bit kernels
// and, where the CPU has AVX-512F (whole or split), again with the 512-bit
// ones ("…/zmm"), whichever the process chose.
func withZMM[F Float](ims []impl[F]) []impl[F] {
	var out []impl[F]
	for _, im := range ims {
		out = append(out, impl[F]{im.name, setZMM(false, im.f)})
		if cpu.X86.HasAVX512F {
			out = append(out, impl[F]{im.name + "/zmm", setZMM(true, im.f)})
		}
	}
	return out
}

func setZMM[F Float](on bool, k kernelOf[F]) kernelOf[F] {
	return func(m, n, kk int, a []F, lda int, b []F, ldb int, c []F, ldc int) {
		old := zmm
		zmm = on
		defer func() { zmm = old }()
		k(m, n, kk, a, lda, b, ldb, c, ldc)
	}
}
