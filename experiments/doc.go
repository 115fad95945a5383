// Package experiments holds the registered experiments (scenarios with an
// `experiment:` section), which study an estimator or an algorithm over
// many seeds and settings instead of training once.
//
// An experiment only generates scenarios and runs them through package
// run: each run it needs is the experiment's scenario with its own
// algorithm, seed, data or network (derive), validated and built by
// run.Build — network, data, model, algorithm and the scenario's faults, as
// for a training run — and executed on the scenario's driver
// (scenarios.Env.NewDriver) with a sink that keeps what the experiment
// compares, or with scenarios.Env.Run into a run folder of its own (with
// metrics and checkpoints). Either way each run keeps a folder below the
// experiment's (runs/<name>): execute records what the run's sink receives
// (stream.go) and checkpoints the run, so that the experiment run again
// on the same folder replays the runs that finished and resumes the
// others, with byte-identical outputs (runfolder.go). Data an experiment
// reads once for all its runs reach them as a data source that holds them
// and names, in the run folder's scenario.yaml, the source it was loaded
// from (describedSource). hgp-error, which compares estimators with the
// dense oracle at a linearization, brings its own unregistered algorithm,
// whose program linearizes between phases and reports its outcome in a
// last phase, through the sink.
//
// The papers' reference numbers are data: paper/<experiment>.yaml,
// embedded and read when the experiment runs.
//
// Each experiment is a file with its registration (weightednodes.go,
// hgperror.go, fbotable.go, commfedbio.go) and files for its runs, tables
// and plots beside it. It may import scenarios, run, report, optim and its
// families, models, graph and internal; nothing below imports it (the
// command line registers it with a blank import).
package experiments
