package cpuid

import (
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sys/cpu"
)

// Info is what the kernels need to know of the processor.
type Info struct {
	Vendor string // "AuthenticAMD", "GenuineIntel", … ("" off amd64)
	Brand  string // the processor's own name, e.g. "AMD EPYC 9R14 …"
	Family int    // display family (base + extended)
	Model  int    // display model (with the extended model where CPUID defines it)

	AVX2, FMA, AVX512F, AVX512VL bool
}

// FullWidth512 reports whether the core executes 512-bit vector operations
// whole rather than as two 256-bit halves: AVX-512F on an Intel core or on
// AMD from Zen 5 (family 1Ah) on. Zen 4 (family 19h) splits them.
func (i Info) FullWidth512() bool {
	if !i.AVX512F {
		return false
	}
	switch i.Vendor {
	case "AuthenticAMD":
		return i.Family >= 0x1a
	case "GenuineIntel":
		return true
	}
	return false
}

// String names the processor for a table header: its brand, vendor and
// family/model in hex, and the vector extensions the kernels use.
func (i Info) String() string {
	if i.Vendor == "" {
		return "unknown processor"
	}
	var ext []string
	for _, f := range []struct {
		ok   bool
		name string
	}{{i.AVX2, "AVX2"}, {i.FMA, "FMA"}, {i.AVX512F, "AVX-512F"}, {i.AVX512VL, "AVX-512VL"}} {
		if f.ok {
			ext = append(ext, f.name)
		}
	}
	brand := i.Brand
	if brand == "" {
		brand = i.Vendor
	}
	s := brand + fmt.Sprintf(" (%s, family %xh model %xh", i.Vendor, i.Family, i.Model)
	if len(ext) > 0 {
		s += "; " + strings.Join(ext, ", ")
	}
	return s + ")"
}

// Wide512 reports whether kernels should use 512-bit registers here: the
// core runs them whole (FullWidth512), AVX-512VL is there too, and, on
// Intel, a start-up probe finds 512-bit multiplies and adds clearly faster
// than 256-bit ones — Intel's server cores have one or two 512-bit FMA
// units and CPUID does not say which; with one, the 256-bit kernels (which
// also use port 1) are faster. The answer is computed once. Whatever it
// is, the project's kernels give the same bits.
func Wide512() bool {
	wideOnce.Do(func() {
		i := Get()
		wide = i.FullWidth512() && i.AVX512VL && (i.Vendor != "GenuineIntel" || probeWide512())
	})
	return wide
}

var (
	wideOnce sync.Once
	wide     bool
)

// Get returns the processor this program runs on.
func Get() Info {
	i := identify()
	i.AVX2, i.FMA = cpu.X86.HasAVX2, cpu.X86.HasFMA
	i.AVX512F, i.AVX512VL = cpu.X86.HasAVX512F, cpu.X86.HasAVX512VL
	return i
}
