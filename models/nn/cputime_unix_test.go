//go:build unix

package nn

import "syscall"

// cpuSeconds returns the process's user and system CPU time. On a shared
// machine it measures the work of a benchmark better than wall time, which
// also counts the time other processes hold the cores.
func cpuSeconds() float64 {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return float64(r.Utime.Nano()+r.Stime.Nano()) / 1e9
}
