package fsutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// A write killed before its rename leaves its temporary file; the next
// write of the same file removes it once the writing process is gone, and
// keeps those of running processes (a write under way) and of other files.
func TestWriteAtomicRemovesLeftovers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("processes are not asked on this system")
	}
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.png")
	name := func(pid int) string { return ".plot.png.tmp" + strconv.Itoa(pid) + "-12345" }
	leftover := name(dead.Process.Pid)
	kept := []string{name(os.Getpid()), name(os.Getppid()), ".other.png.tmp" + strconv.Itoa(dead.Process.Pid) + "-1"}
	for _, f := range append([]string{leftover}, kept...) {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteAtomic(path, []byte("whole")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, leftover)); !os.IsNotExist(err) {
		t.Errorf("the leftover of a process that is gone is still there (%v)", err)
	}
	for _, f := range kept {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was removed: %v", f, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1+len(kept) {
		t.Errorf("%d files in the folder, want %d", len(entries), 1+len(kept))
	}
	if b, _ := os.ReadFile(path); string(b) != "whole" {
		t.Errorf("the file holds %q", b)
	}
}
