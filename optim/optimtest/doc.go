// Package optimtest holds what the tests of the algorithm families share:
// a sink that records a run's events so that two runs compare bit for
// bit.
//
// It may import optim and the standard library only; only tests import
// it.
package optimtest
