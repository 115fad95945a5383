package fsutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// WriteAtomic writes b to path through a temporary file in the same folder
// and a rename, so a reader sees either the old file or the whole new one.
// The file is 0644: outputs are meant to be shared. The temporary file,
// .NAME.tmpPID-N, names the writing process: a write killed before its
// rename leaves it behind, and the next write of path removes it once that
// process is gone.
func WriteAtomic(path string, b []byte) error {
	removeLeftovers(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+strconv.Itoa(os.Getpid())+"-*")
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

// tempPrefix is the start of the names of path's temporary files.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// removeLeftovers removes the temporary files of path that processes no
// longer running left (killed during WriteAtomic); those of a running
// process, this one included, may be another write under way.
func removeLeftovers(path string) {
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pid, _, ok := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 || n == os.Getpid() || running(n) {
			continue
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
