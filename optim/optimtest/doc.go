// Package optimtest holds what the tests of the algorithm families share:
// a sink that records a run's events so that two runs compare bit for
// bit, runs cut into parts and resumed from saved states, and small star
// setups.
//
// It may import optim, graph, models and internal; only tests import it.
package optimtest
