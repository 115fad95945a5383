package run

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"hgpsim/internal/fsutil"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// Files of a run's output folder that checkpointing reads and writes.
const (
	metricsFile    = "metrics.jsonl"
	checkpointFile = "checkpoint.bin"
	scenarioFile   = "scenario.yaml"
	summaryFile    = "summary.json"
	// checkpointMagic opens checkpoint.bin, followed by the SHA-256 of
	// the rest; its number changes whenever the encoding does, so an old
	// checkpoint is refused, not misread.
	checkpointMagic = "hgpsim checkpoint 4\n"
)

// fileCheckpoint is checkpoint.bin: the drivers' checkpoint (clients,
// program, next phase), the sink's state, and where metrics.jsonl stood.
type fileCheckpoint struct {
	// Scenario is the SHA-256 of scenario.yaml as the run wrote it.
	Scenario [sha256.Size]byte
	Optim    optim.Checkpoint
	Sink     sinkState
	// Metrics is the length of metrics.jsonl at the checkpoint and
	// MetricsSHA the SHA-256 of those bytes.
	Metrics    int64
	MetricsSHA [sha256.Size]byte
}

// sinkState is what runSink has gathered from the phases so far.
type sinkState struct {
	Outer         []OuterRecord
	Traffic       []phaseTraffic // by phase name, sorted
	Estimates     *EstimateError
	Hypergradient *HypergradientSummary
	Final         Aggregate
	Evals         []scenarios.Eval
	Cumulative    optim.Traffic
	Divergence    divergence
}

type phaseTraffic struct {
	Phase   string
	Traffic optim.Traffic
}

func (s *runSink) state() sinkState {
	st := sinkState{Outer: s.sum.Outer, Estimates: s.sum.Estimates, Hypergradient: s.sum.Hypergradient,
		Final: s.final, Evals: s.evals, Cumulative: s.traffic, Divergence: s.div}
	for name, t := range s.sum.Traffic {
		st.Traffic = append(st.Traffic, phaseTraffic{name, t})
	}
	sort.Slice(st.Traffic, func(a, b int) bool { return st.Traffic[a].Phase < st.Traffic[b].Phase })
	return st
}

func (s *runSink) restore(st sinkState) {
	s.sum.Outer, s.sum.Estimates, s.sum.Hypergradient = st.Outer, st.Estimates, st.Hypergradient
	s.final, s.evals, s.traffic, s.div = st.Final, st.Evals, st.Cumulative, st.Divergence
	for _, t := range st.Traffic {
		s.sum.Traffic[t.Phase] = t.Traffic
	}
}

// saveCheckpoint writes checkpoint.bin atomically: a run killed while
// writing it keeps the previous one. metrics.jsonl is synced first, so
// that after a crash of the machine the checkpoint never refers to lines
// the disk does not have. It returns the file's size.
func saveCheckpoint(dir string, scenarioSum [sha256.Size]byte, cp *optim.Checkpoint, sink *runSink, mw *metricsWriter, metrics *os.File) (int64, error) {
	if mw.err != nil {
		return 0, fmt.Errorf("writing metrics: %w", mw.err)
	}
	if metrics != nil {
		if err := metrics.Sync(); err != nil {
			return 0, fmt.Errorf("syncing metrics: %w", err)
		}
	}
	fc := fileCheckpoint{Scenario: scenarioSum, Optim: *cp, Sink: sink.state()}
	fc.Metrics, fc.MetricsSHA = mw.position()
	// The client states, which may hold every client's parameters, go
	// after the gob-encoded rest as length-prefixed bytes: written once,
	// not through gob's growing buffer.
	clients := fc.Optim.Clients
	fc.Optim.Clients = nil
	head, err := optim.EncodeState(fc)
	if err != nil {
		return 0, err
	}
	size := len(checkpointMagic) + sha256.Size + 2*binary.MaxVarintLen64 + len(head)
	for _, c := range clients {
		size += binary.MaxVarintLen64 + len(c)
	}
	out := make([]byte, 0, size)
	out = append(out, checkpointMagic...)
	out = append(out, make([]byte, sha256.Size)...)
	out = binary.AppendUvarint(out, uint64(len(head)))
	out = append(out, head...)
	out = binary.AppendUvarint(out, uint64(len(clients)))
	for _, c := range clients {
		out = binary.AppendUvarint(out, uint64(len(c)))
		out = append(out, c...)
	}
	body := len(checkpointMagic) + sha256.Size
	sum := sha256.Sum256(out[body:])
	copy(out[len(checkpointMagic):], sum[:])
	return int64(len(out)), fsutil.WriteAtomic(filepath.Join(dir, checkpointFile), out)
}

// decodeCheckpoint reads what saveCheckpoint wrote after the checksum.
func decodeCheckpoint(b []byte, fc *fileCheckpoint) error {
	next := func() ([]byte, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("a length beyond the end of the file")
		}
		part := b[k : k+int(n)]
		b = b[k+int(n):]
		return part, nil
	}
	head, err := next()
	if err != nil {
		return err
	}
	if err := optim.DecodeState(head, fc); err != nil {
		return err
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return fmt.Errorf("a client count beyond the end of the file")
	}
	b = b[k:]
	fc.Optim.Clients = make([][]byte, n)
	for i := range fc.Optim.Clients {
		if fc.Optim.Clients[i], err = next(); err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%d bytes after the last client state", len(b))
	}
	return nil
}

// readCheckpoint reads dir's checkpoint.bin, checking that it belongs to
// resolved (the bytes of dir's scenario.yaml).
func readCheckpoint(dir string, resolved []byte) (*fileCheckpoint, error) {
	path := filepath.Join(dir, checkpointFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, scenarios.Invalid(dir, "no %s: the run stopped before its first checkpoint (one is taken at outer-step boundaries and at the evaluations of a phase cut into parts, every runtime.checkpoint_every; a run of one phase evaluated only at its end has none), so it cannot be resumed; run it again", checkpointFile)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the checkpoint: %w", err)
	}
	if !bytes.HasPrefix(b, []byte(checkpointMagic)) {
		return nil, scenarios.Invalid(path, "not a checkpoint of this version of hgpsim")
	}
	b = b[len(checkpointMagic):]
	if len(b) < sha256.Size || sha256.Sum256(b[sha256.Size:]) != [sha256.Size]byte(b[:sha256.Size]) {
		return nil, scenarios.Invalid(path, "corrupt checkpoint: its checksum does not match (the file was truncated or changed)")
	}
	var fc fileCheckpoint
	if err := decodeCheckpoint(b[sha256.Size:], &fc); err != nil {
		return nil, scenarios.Invalid(path, "corrupt checkpoint: %v", err)
	}
	if fc.Scenario != sha256.Sum256(resolved) {
		return nil, scenarios.Invalid(filepath.Join(dir, scenarioFile), "changed since the checkpoint was taken; a resumed run must continue the same scenario")
	}
	return &fc, nil
}

// openMetrics opens dir's metrics.jsonl for a resumed run: its first
// fc.Metrics bytes must be those the checkpoint saw (anything after them
// was written after the checkpoint and is written again).
func openMetrics(dir string, fc *fileCheckpoint) (*os.File, *metricsWriter, error) {
	path := filepath.Join(dir, metricsFile)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, scenarios.Invalid(dir, "%s is missing; the checkpoint cannot be resumed without it", metricsFile)
		}
		return nil, nil, fmt.Errorf("opening metrics: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, fc.Metrics))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("reading metrics: %w", err)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	if n != fc.Metrics || sum != fc.MetricsSHA {
		f.Close()
		return nil, nil, scenarios.Invalid(path, "its first %d bytes are not those the checkpoint recorded (the file was truncated or edited)", fc.Metrics)
	}
	if err := f.Truncate(fc.Metrics); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("truncating metrics: %w", err)
	}
	if _, err := f.Seek(fc.Metrics, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("seeking in metrics: %w", err)
	}
	return f, newMetricsWriter(f, fc.Metrics, h), nil
}

// ResumeOptions are the knobs of Resume.
type ResumeOptions struct {
	Options
	// Runtime, when not nil, replaces the scenario's runtime section (the
	// driver, its parallelism, worker processes): outputs do not depend on
	// it, so a run may be resumed on another driver.
	Runtime func(*scenarios.RuntimeSpec)
}

// removeStaleCheckpoint removes the checkpoint of a completed run (one
// with summary.json): a run removes it after writing summary.json, and a
// kill between the two leaves it behind.
func removeStaleCheckpoint(dir string) {
	_ = os.Remove(filepath.Join(dir, checkpointFile))
}

// Resume continues the run whose output folder is opt.OutDir from its last
// checkpoint: it rebuilds the run from the folder's scenario.yaml, restores
// every client, the program and the summary's state, truncates
// metrics.jsonl to where it stood at the checkpoint and runs the remaining
// phases. The outputs are byte-identical to those of the run had it not
// stopped.
func Resume(ctx context.Context, opt ResumeOptions) (*Summary, error) {
	dir := opt.OutDir
	if _, err := os.Stat(filepath.Join(dir, scenarioFile)); errors.Is(err, os.ErrNotExist) {
		return nil, scenarios.Invalid(dir, "no %s: not the output folder of a run", scenarioFile)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, summaryFile)); err == nil {
		removeStaleCheckpoint(dir)
		return nil, scenarios.Invalid(dir, "the run completed (%s exists); there is nothing to resume", summaryFile)
	}
	resolved, err := os.ReadFile(filepath.Join(dir, scenarioFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, scenarios.Invalid(dir, "no %s: not the output folder of a run", scenarioFile)
	} else if err != nil {
		return nil, fmt.Errorf("reading the scenario: %w", err)
	}
	sc, err := scenarios.Parse(filepath.Join(dir, scenarioFile), resolved)
	if err != nil {
		return nil, err
	}
	if sc.Experiment != nil {
		return nil, scenarios.Invalid(dir, "an experiment continues when run again: give hgpsim run the same scenario and --out (its finished runs are kept, its checkpointed runs resumed)")
	}
	fc, err := readCheckpoint(dir, resolved)
	if err != nil {
		return nil, err
	}
	if opt.Runtime != nil {
		opt.Runtime(&sc.Runtime)
	}
	if _, err := scenarios.Check(filepath.Join(dir, scenarioFile), sc, scenarios.CheckOptions{MaxMemory: opt.MaxMemory}); err != nil {
		return nil, err
	}
	run, err := Build(sc, supervisorBuild(sc)...)
	if err != nil {
		return nil, err
	}
	if n := len(fc.Optim.Clients); n != run.Net.N {
		return nil, scenarios.Invalid(filepath.Join(dir, checkpointFile), "holds %d client states for a run of %d nodes", n, run.Net.N)
	}
	f, mw, err := openMetrics(dir, fc)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return execute(ctx, run, resolved, f, mw, fc, opt.Options)
}
