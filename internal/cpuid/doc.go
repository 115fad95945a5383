// Package cpuid names the processor and the width of its vector units, for
// the kernels' choice of path and for the headers of benchmark tables.
//
// The vector width a kernel should use is not a feature flag: AMD's Zen 4
// runs 512-bit instructions in two 256-bit halves, so they add nothing there
// over AVX2, while Zen 5 and Intel's server cores execute them whole. Which
// core this is comes from the vendor, family and model CPUID reports.
//
// Package cpuid imports only the standard library and golang.org/x/sys/cpu.
package cpuid
