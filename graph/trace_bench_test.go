package graph

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"hgpsim/internal/registry"
)

// writeSyntheticTrace writes a gzip CSV trace of rounds rounds for n
// clients: every link starts up with probability 0.6 and, each round,
// changes links flip (distinct, drawn at random).
func writeSyntheticTrace(tb testing.TB, path string, n int, rounds uint64, changes int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	w := bufio.NewWriterSize(zw, 1<<16)
	fmt.Fprintf(w, "#! clients=%d\nround,from,to,up\n", n)
	r := rand.New(rand.NewPCG(3, 4))
	up := make([]bool, n*n)
	var line []byte
	emit := func(t uint64, k int) {
		line = strconv.AppendUint(line[:0], t, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(k/n), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(k%n), 10)
		if up[k] {
			line = append(line, ",1\n"...)
		} else {
			line = append(line, ",0\n"...)
		}
		w.Write(line)
	}
	for k := range up {
		if k/n != k%n && r.Float64() < 0.6 {
			up[k] = true
			emit(0, k)
		}
	}
	seen := map[int]bool{}
	for t := uint64(1); t < rounds; t++ {
		clear(seen)
		for len(seen) < changes {
			k := r.IntN(n * n)
			if k/n == k%n || seen[k] {
				continue
			}
			seen[k] = true
			up[k] = !up[k]
			emit(t, k)
		}
	}
	fmt.Fprintf(w, "#! rounds=%d\n", rounds)
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkRealizeRound realizes every client's links for one round per
// op on a complete directed network of 100 clients, with the bernoulli
// process and with a trace of 10⁶ rounds (10 link changes a round; the
// trace loops past its end), and reports rounds per second and the heap
// in use at the end, which must not grow with the rounds read. Run
// bernoulli and trace interleaved (-count) and compare within one run.
func BenchmarkRealizeRound(b *testing.B) {
	const n = 100
	path := filepath.Join(b.TempDir(), "bench.csv.gz")
	writeSyntheticTrace(b, path, n, 1_000_000, 10)
	procs := map[string]registry.Choice[LinkProcess]{
		"bernoulli": registry.Choose[LinkProcess]("bernoulli"),
		"trace":     {Name: "trace", Params: &Trace{File: path, End: "loop"}},
	}
	for _, name := range []string{"bernoulli", "trace"} {
		b.Run(name, func(b *testing.B) {
			topo := registry.Choose[Topology]("stochastic-directed")
			topo.Params.(*Stochastic).Process = procs[name]
			nw, err := Build(topo, n, 9)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]int, 0, n)
			up := 0
			b.ResetTimer()
			for tick := range uint64(b.N) {
				for i := range n {
					dst = nw.Realize(i, tick, dst)
					up += len(dst)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rounds/s")
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/1e6, "MB-heap")
			if up == 0 {
				b.Fatal("no link was ever up")
			}
		})
	}
	// The whole trace, streamed: one link asked about at each of the 10⁶
	// rounds, so that the file is read to its end.
	b.Run("stream-1e6", func(b *testing.B) {
		topo := registry.Choose[Topology]("stochastic-directed")
		topo.Params.(*Stochastic).Process = procs["trace"]
		nw, err := Build(topo, n, 9)
		if err != nil {
			b.Fatal(err)
		}
		var ms runtime.MemStats
		b.ResetTimer()
		for range b.N {
			for tick := range uint64(1_000_000) {
				nw.Process.Up(9, 0, 1, 0.5, tick)
				if tick == 1000 {
					runtime.GC()
					runtime.ReadMemStats(&ms)
					b.ReportMetric(float64(ms.HeapInuse)/1e6, "MB-heap-at-1e3")
				}
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "rounds/s")
		runtime.GC()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/1e6, "MB-heap-at-1e6")
	})
}

// BenchmarkRealizeRatio times the two processes of BenchmarkRealizeRound
// in alternating blocks of 500 rounds, so that a shared machine's load
// weighs on both alike, and reports the trace's rounds per second over
// bernoulli's (≥ 1: the trace is faster). One op is one block of each.
// The trace's cost grows with the changes per round it lists, so the
// sub-benchmarks range from slowly changing links (10 changes a round,
// 10⁶ rounds) to a recording of independent links with δ̄ = 1/2 (4,950 of
// the 9,900 links change every round).
func BenchmarkRealizeRatio(b *testing.B) {
	const n, block = 100, 500
	for _, c := range []struct {
		changes int
		rounds  uint64
	}{{10, 1_000_000}, {1000, 10_000}, {4950, 2_000}} {
		b.Run(fmt.Sprintf("changes=%d", c.changes), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.csv.gz")
			writeSyntheticTrace(b, path, n, c.rounds, c.changes)
			nets := make([]*Network, 2)
			for k, c := range []registry.Choice[LinkProcess]{
				registry.Choose[LinkProcess]("bernoulli"),
				{Name: "trace", Params: &Trace{File: path, End: "loop"}},
			} {
				topo := registry.Choose[Topology]("stochastic-directed")
				topo.Params.(*Stochastic).Process = c
				nw, err := Build(topo, n, 9)
				if err != nil {
					b.Fatal(err)
				}
				nets[k] = nw
			}
			var spent [2]time.Duration
			dst := make([]int, 0, n)
			tick := uint64(0)
			b.ResetTimer()
			for range b.N {
				for k, nw := range nets {
					start := time.Now()
					for t := tick; t < tick+block; t++ {
						for i := range n {
							dst = nw.Realize(i, t, dst)
						}
					}
					spent[k] += time.Since(start)
				}
				tick += block
			}
			b.ReportMetric(float64(b.N*block)/spent[0].Seconds(), "bernoulli-rounds/s")
			b.ReportMetric(float64(b.N*block)/spent[1].Seconds(), "trace-rounds/s")
			b.ReportMetric(spent[0].Seconds()/spent[1].Seconds(), "trace/bernoulli")
		})
	}
}
