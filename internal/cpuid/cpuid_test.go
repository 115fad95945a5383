package cpuid

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// On Linux the kernel reads the same CPUID leaves into /proc/cpuinfo: the
// vendor, family, model and brand decoded here must be its.
func TestGetAgreesWithProcCPUInfo(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("CPUID is read on amd64 only")
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo to compare with")
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			if len(fields) > 0 {
				break // the first processor's block is enough
			}
			continue
		}
		fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	i := Get()
	if i.Vendor != fields["vendor_id"] {
		t.Errorf("vendor %q, /proc/cpuinfo says %q", i.Vendor, fields["vendor_id"])
	}
	if got, want := strconv.Itoa(i.Family), fields["cpu family"]; got != want {
		t.Errorf("family %s, /proc/cpuinfo says %s", got, want)
	}
	if got, want := strconv.Itoa(i.Model), fields["model"]; got != want {
		t.Errorf("model %s, /proc/cpuinfo says %s", got, want)
	}
	if want := strings.Join(strings.Fields(fields["model name"]), " "); i.Brand != want {
		t.Errorf("brand %q, /proc/cpuinfo says %q", i.Brand, want)
	}
}

func TestFullWidth512(t *testing.T) {
	for _, c := range []struct {
		i    Info
		want bool
	}{
		{Info{Vendor: "AuthenticAMD", Family: 0x19, AVX512F: true}, false}, // Zen 4
		{Info{Vendor: "AuthenticAMD", Family: 0x1a, AVX512F: true}, true},  // Zen 5
		{Info{Vendor: "GenuineIntel", Family: 6, AVX512F: true}, true},
		{Info{Vendor: "GenuineIntel", Family: 6}, false},
		{Info{Vendor: "HygonGenuine", Family: 0x18, AVX512F: true}, false},
	} {
		if got := c.i.FullWidth512(); got != c.want {
			t.Errorf("%+v: FullWidth512 %v, want %v", c.i, got, c.want)
		}
	}
}

// TestProbeWide512 runs the probe Intel cores are judged by. A core that
// runs 512-bit operations whole on two units (Zen 5) should pass it; on a
// shared machine a timing can lose, so a miss is logged, not failed.
func TestProbeWide512(t *testing.T) {
	i := Get()
	if !i.AVX512F {
		t.Skip("no AVX-512F")
	}
	got := probeWide512()
	t.Logf("%s: 512-bit fused multiply-adds clearly faster: %v; Wide512: %v", i, got, Wide512())
	if i.Vendor == "AuthenticAMD" && i.Family >= 0x1a && !got {
		t.Logf("note: the probe missed on a core with two 512-bit units (a busy machine?)")
	}
	if Wide512() && !i.FullWidth512() {
		t.Errorf("Wide512 on a core that splits 512-bit operations")
	}
}
