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
			ims = append(ims, impl{"avx512", dotNTAVX512})
		}
		return ims
	case "AccNN":
		return []impl{{"avx2", accNNAVX2}, {"direct", accNNDirect}, {"packed", accNNPacked}}
	case "AccTN":
		return []impl{{"avx2", accTNAVX2}, {"direct", accTNDirect}, {"packed", accTNPacked}}
	default:
		return []impl{{"avx2", accNTAVX2}}
	}
}
