// Package plugintest gives the tests that cover every registered plug-in a
// small valid scenario for each kind, so that a new plug-in is decoded,
// validated and run by those tests without editing them.
//
// A kind's scenario is its own example (registry.Exampler) when it has
// one, and otherwise the kind named in a small run of a few rounds with
// everything else at its defaults. Only the axes are listed here (how a
// scenario names a kind of each), never kinds.
//
// It may import scenarios, optim, graph, models and internal packages; only
// tests import it.
package plugintest
