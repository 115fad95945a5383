package bench

import (
	"fmt"
	"testing"
)

// BenchmarkSGPRound measures one SGP round of the quickstart setup
// (SGPRounds) under each driver. One op is one round: b.N rounds run as a
// single phase that evaluates only after its last round, so ns/op is ns per
// round and allocs/op allocations per round. Building the setup, entering
// the phase and building the driver (for actors, the actor system) are
// outside the timer.
func BenchmarkSGPRound(b *testing.B) {
	for _, drv := range Drivers {
		for _, n := range []int{10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/n=%d", drv, n), func(b *testing.B) {
				s, err := SGPRounds(n)
				if err != nil {
					b.Fatal(err)
				}
				timeRounds(b, s, drv)
			})
		}
	}
}

// benchHyper times b.N rounds of the estimator est (HyperRounds) under
// both drivers at n = 10 and 100. One op is one round; the SGP warm-up,
// the linearization and the driver are outside the timer.
func benchHyper(b *testing.B, est string) {
	for _, drv := range Drivers {
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/n=%d", drv, n), func(b *testing.B) {
				s, err := HyperRounds(n, est)
				if err != nil {
					b.Fatal(err)
				}
				timeRounds(b, s, drv)
			})
		}
	}
}

// BenchmarkHGPRound measures one round of HGP (Eq. 12): push u, mix,
// one InnerHVP and one InnerCross per client.
func BenchmarkHGPRound(b *testing.B) { benchHyper(b, "hgp") }

// BenchmarkVRHGPRound measures one round of VR-HGP (α = 0.9, β = 0.1, the
// paper's values): push [u; w] (twice HGP's payload), mix both, two
// InnerHVP and two InnerCross per client.
func BenchmarkVRHGPRound(b *testing.B) { benchHyper(b, "vr-hgp") }

// timeRounds runs b.N rounds of the setup's phase on a fresh driver of the
// named kind, timing only the rounds, and reports rounds per second.
func timeRounds(b *testing.B, s *Rounds, drv string) {
	t, err := s.Prepare(drv)
	if err != nil {
		b.Fatal(err)
	}
	defer t.Close()
	b.ReportAllocs()
	b.ResetTimer()
	if err := t.Run(b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
}
