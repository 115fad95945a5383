package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteAtomic writes b to path through a temporary file in the same folder
// and a rename, so a reader sees either the old file or the whole new one.
// The file is 0644: outputs are meant to be shared.
func WriteAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := tmp.Write(b)
	perr := tmp.Chmod(0o644) // CreateTemp makes the file 0600
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := firstErr(werr, perr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// The rename is durable once the folder is synced; a file system that
	// cannot sync folders still has the rename, so that error is not one.
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
