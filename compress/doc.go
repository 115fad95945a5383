// Package compress holds the vector compressors of Comm-FedBiO:
// Top-k sparsification with client-side error feedback, the Count-Sketch
// (linear, so a server sums the clients' tables, with heavy-hitter
// recovery) and the sparse embedding matrices of the non-iterative
// hyper-gradient (Corollary 3 of the paper). Every random choice (hashes,
// signs) comes from a seed the caller derives from internal/rng, so that
// all parties who share the seed build the same operator.
//
// It may import internal packages and the standard library only.
package compress
