//go:build !unix

package fsutil

// running says every process may be running where it cannot be asked: no
// leftover is removed.
func running(int) bool { return true }
