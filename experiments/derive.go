package experiments

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"

	"hgpsim/datasets"
	"hgpsim/internal/registry"
	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// derive returns the training scenario of one run of an experiment: sc
// without its experiment section, named name, with the given seed and
// algorithm (its registered kind and parameters). The network, data,
// model, faults and runtime are sc's until the caller changes them.
func derive(sc scenarios.Scenario, name string, seed uint64, kind string, alg optim.Algorithm) scenarios.Scenario {
	d := sc
	d.Experiment = nil
	d.Name = name
	d.Seed = seed
	d.Algorithm = registry.Choice[optim.Algorithm]{Name: kind, Params: alg}
	return d
}

// execute validates and builds a derived scenario with package run (its
// network, data, model, algorithm and faults, as for a training run) and
// executes the run's program on the experiment's driver, reporting to sink.
// Given an Env with run folders (run.RunFolders, as run.Execute gives),
// the run keeps its folder there — its scenario, the stream of what sink
// received, checkpoints while it runs — so that the experiment run again
// on the same folder replays the runs that finished instead of running
// them and resumes the others (executeIn). sink receives each report as
// decoded from its record: the same values whether the run ran or was
// replayed (stream.go says what a record leaves out).
func execute(ctx context.Context, env scenarios.Env, sc scenarios.Scenario, sink optim.Sink) error {
	if f, ok := env.(run.RunFolders); ok {
		return executeIn(ctx, env, f.RunFolder(sc.Name), f.ReplayOnly(), sc, sink)
	}
	r, err := run.Build(sc)
	if err != nil {
		return err
	}
	drv, closeDriver, err := env.NewDriver(r.Net, r.Factory())
	if err != nil {
		return err
	}
	defer closeDriver()
	rec := &recorder{w: bufio.NewWriter(io.Discard), h: sha256.New(), sink: sink}
	_, err = drv.Execute(ctx, r.Program(), rec)
	return err
}

// loaded is a data source whose clients' data an experiment already holds:
// the runs of one setting share it instead of reading the files again. It
// validates and describes itself as the source it was loaded from.
type loaded struct {
	src  datasets.Source
	data []datasets.ClientData
}

// withData returns sc's data section replaced by data, loaded from sc's
// source for sc's nodes and seed.
func withData(sc scenarios.Scenario, data []datasets.ClientData) scenarios.Scenario {
	sc.Data.Source = registry.Choice[datasets.Source]{Name: sc.Data.Source.Name, Params: &loaded{src: sc.Data.Source.Params, data: data}}
	return sc
}

func (l *loaded) Validate(nodes int) error { return l.src.Validate(nodes) }
func (l *loaded) Shape() (int, int)        { return l.src.Shape() }
func (l *loaded) Examples(nodes int) int64 { return l.src.Examples(nodes) }
func (l *loaded) Files() []string          { return nil } // in memory

// describedSource implements describedSource: the source, loaded for the
// run's nodes and seed.
func (l *loaded) describedSource() datasets.Source { return l.src }
func (l *loaded) Load(nodes int, _ uint64) ([]datasets.ClientData, error) {
	if nodes != len(l.data) {
		return nil, fmt.Errorf("the data were loaded for %d nodes, the run has %d", len(l.data), nodes)
	}
	return l.data, nil
}

// nodeShiftImages is node-shift data drawn from Fashion-MNIST images an
// experiment already holds (read once for all its runs, or a test's
// stand-in), with the draws of datasets.NodeShiftData for each run's seed.
type nodeShiftImages struct {
	spec        datasets.NodeShiftData
	train, test *datasets.Dataset
}

func (d *nodeShiftImages) Validate(nodes int) error { return d.spec.Validate(nodes) }
func (d *nodeShiftImages) Shape() (int, int)        { return d.spec.Shape() }
func (d *nodeShiftImages) Examples(nodes int) int64 { return d.spec.Examples(nodes) }
func (d *nodeShiftImages) Files() []string          { return nil } // in memory

// describedSource implements describedSource: node-shift data with the
// run's setting and target.
func (d *nodeShiftImages) describedSource() datasets.Source { return &d.spec }
func (d *nodeShiftImages) Load(nodes int, seed uint64) ([]datasets.ClientData, error) {
	return datasets.NodeShift(d.spec.Spec(nodes), d.train, d.test, seed)
}

// writeSummary writes an experiment's summary as summary.json, indented,
// with a final newline.
func writeSummary(env scenarios.Env, sum any) error {
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	return env.WriteFile("summary.json", append(b, '\n'))
}
