// Package bench measures hgpsim: rounds per second of SGP and the
// hyper-gradient estimators under each driver — the sequential driver on
// one goroutine (the yardstick) and on every core, and the actor runtime (its
// overhead is the ratio of their times), and where the time of a PDBO outer
// step goes. docs/performance.md has the numbers.
//
// The setups are built from scenarios with run.Build and their real
// clients (run.Run.Factory):
//
//   - SGPRounds: SGP rounds on the quickstart scenario at n clients;
//   - HyperRounds: HGP or VR-HGP rounds on the same setup with the
//     label-weights head, linearized after HGPWarmup SGP rounds;
//   - NewOuter: one PDBO outer step of a scenario file, run by the
//     scenario's own program (run.Run.Program, Alg. 1) through the driver,
//     with a timing optim.Sink and the rounds capped and extrapolated.
//
// Rounds.Compare and Outer.Compare measure the drivers in rotation and
// take medians; WriteSGP, WriteHyper and WriteOuter write the Markdown
// tables of `hgpsim bench`, a thin command around them. The Go benchmarks
// of this package (go test -bench . ./bench) time the same setups.
//
// It may import run, scenarios, actors and the packages below them; never
// report, experiments or the command.
package bench
