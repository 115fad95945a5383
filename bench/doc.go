// Package bench measures hgpsim: rounds per second of SGP and the
// hyper-gradient estimators under both drivers (the actor runtime's
// overhead is the ratio of their times), and where the time of a PDBO outer
// step goes. The Go benchmarks (go test -bench . ./bench) and the
// `hgpsim bench` command share its setups; docs/performance.md has the
// numbers.
package bench
