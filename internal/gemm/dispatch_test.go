package gemm

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"hgpsim/internal/vec"
)

// TestNoAVX2SelectsPureGo runs itself again with HGPSIM_NOAVX2=1 (the
// choice is made at init) and checks that the child installed the pure-Go
// kernels.
func TestNoAVX2SelectsPureGo(t *testing.T) {
	if os.Getenv("GEMM_DISPATCH_CHILD") == "1" {
		if vec.HasAVX2() {
			t.Fatal("HGPSIM_NOAVX2=1, yet vec reports AVX2 in use")
		}
		same := func(x, y any) bool { return reflect.ValueOf(x).Pointer() == reflect.ValueOf(y).Pointer() }
		if !same(dotNT, dotNTGo[float64]) || !same(accNN, accNNGo[float64]) || !same(accTN, accTNGo[float64]) || !same(accNT, accNTGo[float64]) ||
			!same(dotNT32, dotNTGo[float32]) || !same(accNN32, accNNGo[float32]) || !same(accTN32, accTNGo[float32]) || !same(accNT32, accNTGo[float32]) {
			t.Fatal("HGPSIM_NOAVX2=1, yet an assembly kernel is installed")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoAVX2SelectsPureGo$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HGPSIM_NOAVX2=1", "GEMM_DISPATCH_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child run: %v\n%s", err, out)
	}
}

// TestPathNamesTheChoice checks that Path names the kernels init chose,
// and that HGPSIM_NOAVX512=1 keeps the chain-order kernels at 256 bits.
func TestPathNamesTheChoice(t *testing.T) {
	if os.Getenv("GEMM_DISPATCH_CHILD") == "2" {
		if zmm || strings.HasPrefix(Path(), "avx512") {
			t.Fatalf("HGPSIM_NOAVX512=1, yet the 512-bit kernels are chosen (path %q)", Path())
		}
		return
	}
	switch {
	case !vec.HasAVX2() || !cpu.X86.HasFMA:
		if !strings.HasPrefix(Path(), "go") {
			t.Errorf("pure-Go kernels in use, yet Path is %q", Path())
		}
	case zmm:
		if !strings.HasPrefix(Path(), "avx512") {
			t.Errorf("512-bit kernels in use, yet Path is %q", Path())
		}
	default:
		if !strings.HasPrefix(Path(), "avx2") {
			t.Errorf("256-bit kernels in use, yet Path is %q", Path())
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPathNamesTheChoice$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HGPSIM_NOAVX512=1", "GEMM_DISPATCH_CHILD=2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child run: %v\n%s", err, out)
	}
}
