//go:build !unix

package nn

// cpuSeconds is not available here; benchmarks report 0.
func cpuSeconds() float64 { return 0 }
