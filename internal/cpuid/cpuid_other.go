//go:build !amd64

package cpuid

func identify() Info { return Info{} }

func probeWide512() bool { return false }
