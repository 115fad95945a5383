//go:build unix

package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"hgpsim/scenarios"
)

// lockDir takes an exclusive lock on the output folder dir, so that a run
// and a resume (or two resumes) never write the same metrics.jsonl at
// once. The lock is the kernel's (flock), so it goes with the process,
// however it ends. The returned function releases it.
func lockDir(dir string) (func(), error) {
	path := filepath.Join(dir, ".hgpsim.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking the output folder: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, scenarios.Invalid(dir, "another hgpsim process is writing into this folder")
		}
		return nil, fmt.Errorf("locking the output folder: %w", err)
	}
	return func() { f.Close() }, nil
}
