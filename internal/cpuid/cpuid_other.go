//go:build !amd64

package cpuid

func identify() Info { return Info{} }
