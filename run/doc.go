// Package run turns a validated scenario into a run and executes it.
//
// Build builds what the run's clients are made of — the network, each
// client's data, the model and the initial parameters — and asks the
// scenario's algorithm (a registered plug-in; Build names none) for the
// client factory and the program, handing it the scenario's sections
// through optim.Setup. Execute hands them to
// the driver the scenario names (optim.Sequential or the actor runtime)
// with a sink that writes metrics.jsonl, one line per write, and assembles
// summary.json, written last and atomically. An experiment scenario runs
// its registered experiment instead, through the same drivers (Env).
// PlanSweep and Sweep run many scenarios at once, each in its own folder.
//
// It may import scenarios, actors, optim (with optim/faults), graph, models
// and internal packages; never an algorithm by its family, report,
// experiments, bench or the command.
package run
