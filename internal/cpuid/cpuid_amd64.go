package cpuid

import (
	"encoding/binary"
	"strings"
	"time"
)

// cpuid executes CPUID with the given leaf and subleaf.
//
//go:noescape
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

func identify() Info {
	var i Info
	max, b, c, d := cpuid(0, 0)
	var v [12]byte
	binary.LittleEndian.PutUint32(v[0:], b)
	binary.LittleEndian.PutUint32(v[4:], d)
	binary.LittleEndian.PutUint32(v[8:], c)
	i.Vendor = string(v[:])
	if max >= 1 {
		a, _, _, _ := cpuid(1, 0)
		family, model := int(a>>8&0xf), int(a>>4&0xf)
		if family == 0xf {
			family += int(a >> 20 & 0xff)
		}
		if family == 0x6 || family >= 0xf {
			model += int(a>>16&0xf) << 4
		}
		i.Family, i.Model = family, model
	}
	if ext, _, _, _ := cpuid(0x80000000, 0); ext >= 0x80000004 {
		var name [48]byte
		for k := range 3 {
			a, b, c, d := cpuid(0x80000002+uint32(k), 0)
			for j, r := range [4]uint32{a, b, c, d} {
				binary.LittleEndian.PutUint32(name[16*k+4*j:], r)
			}
		}
		i.Brand = strings.Join(strings.Fields(strings.TrimRight(string(name[:]), "\x00")), " ")
	}
	return i
}

// The throughput probe's loops (cpuid_amd64.s); they need AVX-512F.
//
//go:noescape
func fma256(n int)

//go:noescape
func fma512(n int)

// probeWide512 times the same fused multiply-add loop on 256- and 512-bit
// registers (the fastest of five runs of 2,000 rounds each, about 0.1 ms in
// all) and reports whether the 512-bit loop, the same instructions doing
// twice the work, took under 1.8 times the 256-bit loop's time: per unit of
// work, clearly faster. With two 512-bit units both loops take the same
// time; with one, the 512-bit loop takes twice as long.
func probeWide512() bool {
	best := func(run func(int)) time.Duration {
		d := time.Duration(1 << 62)
		for range 5 {
			t0 := time.Now()
			run(2000)
			d = min(d, time.Since(t0))
		}
		return d
	}
	narrow := best(fma256)
	wide := best(fma512)
	return wide*10 < narrow*18
}
