//go:build !unix

package run

// lockDir does nothing where flock is not available.
func lockDir(string) (func(), error) { return func() {}, nil }
