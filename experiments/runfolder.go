package experiments

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	"hgpsim/datasets"
	"hgpsim/internal/fsutil"
	"hgpsim/internal/registry"
	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

// Files of a derived run's folder (run.RunFolders): the resolved
// scenario, the stream of what the sink received (stream.go), the mark
// of a finished run, and the checkpoint of one that is running.
const (
	runScenarioFile   = "scenario.yaml"
	runStreamFile     = "stream.bin"
	runDoneFile       = "done.json"
	runCheckpointFile = "checkpoint.bin"
	// runCheckpointMagic opens checkpoint.bin, followed by the SHA-256 of
	// the rest; its number changes with the encoding.
	runCheckpointMagic = "hgpsim derived-run checkpoint 1\n"
	runDoneFormat      = "hgpsim derived run 1"
)

// checkpointInterval is the least time between two checkpoints a derived
// run writes (and from its start to the first): each one syncs files,
// about 20 ms, and an experiment's runs are often short, with a boundary
// every few milliseconds; a kill loses at most this and the rounds up to
// the next boundary. Which boundaries get one does not change a bit of
// the outputs.
const checkpointInterval = time.Second

// checkpointPacer is implemented by an Env that sets the interval between
// checkpoints itself (tests: every boundary).
type checkpointPacer interface{ checkpointInterval() time.Duration }

// runDone is done.json: the stream of a finished run, which a replay
// checks before it believes it.
type runDone struct {
	Format  string `json:"format"`
	Records int    `json:"records"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
}

// runCheckpoint is checkpoint.bin: the drivers' checkpoint and where the
// stream stood.
type runCheckpoint struct {
	Scenario   [sha256.Size]byte // of scenario.yaml
	Optim      optim.Checkpoint
	Stream     int64 // bytes of stream.bin at the checkpoint
	StreamSHA  [sha256.Size]byte
	StreamRecs int
}

// describedSource is implemented by the data sources an experiment holds
// in memory: a run folder's scenario.yaml names the registered source
// they were made from, with its parameters.
type describedSource interface{ describedSource() datasets.Source }

// resolvedScenario renders a derived scenario as its run folder keeps it.
func resolvedScenario(sc scenarios.Scenario) ([]byte, error) {
	if err := sc.Validate(); err != nil {
		return nil, scenarios.Invalid("scenario", "%s", err.Error())
	}
	if d, ok := sc.Data.Source.Params.(describedSource); ok {
		sc.Data.Source = registry.Choice[datasets.Source]{Name: sc.Data.Source.Name, Params: d.describedSource()}
	}
	return scenarios.Marshal(sc)
}

// executeIn runs the derived scenario sc in its run folder dir, or replays
// it: a run that finished in an earlier invocation (done.json, the same
// scenario.yaml) feeds its recorded stream to sink and runs nothing; one
// with a checkpoint feeds the stream up to the checkpoint and continues
// from there; any other starts from the beginning. The sink sees the same
// calls with the same values in every case. With replayOnly, a run that
// did not finish is an error naming its folder.
func executeIn(ctx context.Context, env scenarios.Env, dir string, replayOnly bool, sc scenarios.Scenario, sink optim.Sink) error {
	resolved, err := resolvedScenario(sc)
	if err != nil {
		return fmt.Errorf("rendering scenario: %w", err)
	}
	scPath := filepath.Join(dir, runScenarioFile)
	have, err := os.ReadFile(scPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		have = nil
	case err != nil:
		return err
	case !bytes.Equal(have, resolved):
		return scenarios.Invalid(scPath, "holds another scenario than this experiment's run %s (the command or the scenario file changed); give the experiment another --out, or remove the folder", sc.Name)
	}
	if have != nil {
		done, err := readDone(dir)
		if err == nil {
			return replayStream(dir, done, sink)
		}
		if replayOnly {
			return scenarios.Invalid(dir, "the run did not finish (%v); run the experiment again with the same command and --out to finish it", err)
		}
	} else if replayOnly {
		return scenarios.Invalid(dir, "no such run: the experiment has not started it; run the experiment again with the same command and --out")
	}
	r, err := run.Build(sc)
	if err != nil {
		return err
	}
	scenarioSum := sha256.Sum256(resolved)
	var cp *runCheckpoint
	if have != nil {
		cp = readRunCheckpoint(dir, scenarioSum, r.Net.N)
	}
	rec, err := openStream(dir, resolved, cp, sink)
	if err != nil {
		return err
	}
	defer rec.close()
	cps := &optim.Checkpoints{Program: r.Program(), Every: sc.Runtime.CheckpointEvery}
	if rec.resumed {
		cps.Resume = &cp.Optim
	}
	interval := checkpointInterval
	if p, ok := env.(checkpointPacer); ok {
		interval = p.checkpointInterval()
	}
	last := time.Now()
	cps.Save = func(c *optim.Checkpoint) error {
		if time.Since(last) < interval {
			return nil
		}
		err := rec.checkpoint(dir, scenarioSum, c)
		last = time.Now()
		return err
	}
	drv, closeDriver, err := env.NewDriver(r.Net, r.Factory())
	if err != nil {
		return err
	}
	defer closeDriver()
	if _, err := drv.Execute(ctx, cps, cps.Sink(rec)); err != nil {
		var ce *optim.ClientError
		if rec.resumed && errors.As(err, &ce) && ce.Phase == optim.PhaseLoadState {
			// The sink has seen the run's start: it cannot start over in
			// this invocation, but the next one must not resume again.
			_ = os.Remove(filepath.Join(dir, runCheckpointFile))
			return scenarios.Invalid(filepath.Join(dir, runCheckpointFile), "a client refused its saved state (%v); the checkpoint was removed: run the experiment again to start this run over", err)
		}
		return err
	}
	return rec.finish(dir)
}

// readDone reads dir's done.json (replayStream checks the stream against it).
func readDone(dir string) (*runDone, error) {
	b, err := os.ReadFile(filepath.Join(dir, runDoneFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no %s", runDoneFile)
		}
		return nil, err
	}
	var d runDone
	if err := json.Unmarshal(b, &d); err != nil || d.Format != runDoneFormat {
		return nil, fmt.Errorf("%s is not one of this version of hgpsim", runDoneFile)
	}
	return &d, nil
}

// replayStream feeds the recorded stream of a finished run to sink, after
// checking it is the one done.json describes.
func replayStream(dir string, done *runDone, sink optim.Sink) error {
	path := filepath.Join(dir, runStreamFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("replaying: %w", err)
	}
	sum := sha256.Sum256(b)
	if int64(len(b)) != done.Bytes || hex.EncodeToString(sum[:]) != done.SHA256 {
		return scenarios.Invalid(path, "not the stream %s recorded (%d bytes, SHA-256 %.12s…): the file was truncated or changed; remove %s to run the run again",
			runDoneFile, done.Bytes, done.SHA256, runDoneFile)
	}
	n, err := replayRecords(b, sink)
	if err == nil && n != done.Records {
		err = fmt.Errorf("%d records, %s says %d", n, runDoneFile, done.Records)
	}
	if err != nil {
		return fmt.Errorf("replaying %s: %w", path, err)
	}
	return nil
}

// replayRecords feeds every record of a stream file's bytes to sink and
// returns how many there were.
func replayRecords(b []byte, sink optim.Sink) (int, error) {
	if !bytes.HasPrefix(b, []byte(streamMagic)) {
		return 0, errors.New("not a stream of this version of hgpsim")
	}
	b = b[len(streamMagic):]
	n := 0
	for len(b) > 0 {
		ev, rep, rest, err := nextRecord(b)
		if err != nil {
			return n, err
		}
		if err := send(sink, ev, rep); err != nil {
			return n, err
		}
		b = rest
		n++
	}
	return n, nil
}

// readRunCheckpoint returns dir's checkpoint when it belongs to the
// scenario whose SHA-256 is scenarioSum and to n clients, else nil: a
// checkpoint that cannot be resumed costs the run's time, not the
// experiment.
func readRunCheckpoint(dir string, scenarioSum [sha256.Size]byte, n int) *runCheckpoint {
	b, err := os.ReadFile(filepath.Join(dir, runCheckpointFile))
	if err != nil || !bytes.HasPrefix(b, []byte(runCheckpointMagic)) {
		return nil
	}
	b = b[len(runCheckpointMagic):]
	if len(b) < sha256.Size || sha256.Sum256(b[sha256.Size:]) != [sha256.Size]byte(b[:sha256.Size]) {
		return nil
	}
	var cp runCheckpoint
	if optim.DecodeState(b[sha256.Size:], &cp) != nil || cp.Scenario != scenarioSum || len(cp.Optim.Clients) != n {
		return nil
	}
	return &cp
}

// recorder is the sink of a derived run: it appends each call's record to
// stream.bin and hands the sink the call decoded from the record.
type recorder struct {
	f       *os.File
	w       *bufio.Writer
	n       int64     // bytes of the stream
	h       hash.Hash // of those bytes
	records int
	sink    optim.Sink
	buf     []byte
	resumed bool // from a checkpoint
}

// openStream opens dir's stream for a run from the start (cp nil: a new
// folder with scenario.yaml and an empty stream) or from cp: the stream's
// first cp.Stream bytes must be those the checkpoint saw, and are fed to
// sink; the rest, written after it, is cut off. A stream that does not
// match starts the run over.
func openStream(dir string, resolved []byte, cp *runCheckpoint, sink optim.Sink) (*recorder, error) {
	path := filepath.Join(dir, runStreamFile)
	if cp != nil {
		r, err := resumeStream(path, cp, sink)
		if err != nil || r != nil {
			return r, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, name := range []string{runDoneFile, runCheckpointFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if err := fsutil.WriteAtomic(filepath.Join(dir, runScenarioFile), resolved); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	r := &recorder{f: f, w: bufio.NewWriterSize(f, 1<<16), h: sha256.New(), sink: sink}
	r.write([]byte(streamMagic))
	return r, nil
}

// resumeStream opens the stream of a checkpointed run, or returns nil
// when it is not the one the checkpoint saw.
func resumeStream(path string, cp *runCheckpoint, sink optim.Sink) (*recorder, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil
	}
	h := sha256.New()
	prefix, err := io.ReadAll(io.LimitReader(f, cp.Stream))
	h.Write(prefix)
	if err != nil || int64(len(prefix)) != cp.Stream || [sha256.Size]byte(h.Sum(nil)) != cp.StreamSHA {
		f.Close()
		return nil, nil
	}
	if err := f.Truncate(cp.Stream); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(cp.Stream, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	n, err := replayRecords(prefix, sink)
	if err == nil && n != cp.StreamRecs {
		err = fmt.Errorf("%d records, the checkpoint says %d", n, cp.StreamRecs)
	}
	if err != nil {
		// The sink has seen part of the run: it cannot start over.
		f.Close()
		return nil, fmt.Errorf("replaying %s: %w", path, err)
	}
	return &recorder{f: f, w: bufio.NewWriterSize(f, 1<<16), n: cp.Stream, h: h, records: n, sink: sink, resumed: true}, nil
}

func (r *recorder) write(b []byte) {
	r.w.Write(b) // its error sticks in the bufio.Writer; flush returns it
	r.h.Write(b)
	r.n += int64(len(b))
}

func (r *recorder) call(ev *optim.RoundEvent, rep *optim.PhaseReport) error {
	r.buf = appendRecord(r.buf[:0], ev, rep)
	r.write(r.buf)
	r.records++
	ev, rep, _, err := nextRecord(r.buf)
	if err != nil {
		panic(fmt.Sprintf("experiments: a sink record does not decode: %v", err)) // the codec's bug
	}
	return send(r.sink, ev, rep)
}

// Evaluated implements optim.Sink.
func (r *recorder) Evaluated(ev *optim.RoundEvent) error { return r.call(ev, nil) }

// Finished implements optim.Sink.
func (r *recorder) Finished(rep *optim.PhaseReport) error { return r.call(nil, rep) }

// sync writes the stream out to the disk.
func (r *recorder) sync() error {
	if err := r.w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", runStreamFile, err)
	}
	return r.f.Sync()
}

// checkpoint writes checkpoint.bin atomically after syncing the stream, so
// that it never refers to records the disk does not have.
func (r *recorder) checkpoint(dir string, scenarioSum [sha256.Size]byte, c *optim.Checkpoint) error {
	if err := r.sync(); err != nil {
		return err
	}
	cp := runCheckpoint{Scenario: scenarioSum, Optim: *c, Stream: r.n, StreamRecs: r.records}
	r.h.Sum(cp.StreamSHA[:0])
	body, err := optim.EncodeState(cp)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	out := make([]byte, 0, len(runCheckpointMagic)+len(sum)+len(body))
	out = append(append(append(out, runCheckpointMagic...), sum[:]...), body...)
	return fsutil.WriteAtomic(filepath.Join(dir, runCheckpointFile), out)
}

// finish marks the run finished: the stream synced, done.json written
// (atomically: its presence means the stream is whole) and the checkpoint
// removed.
func (r *recorder) finish(dir string) error {
	if err := r.sync(); err != nil {
		return err
	}
	d := runDone{Format: runDoneFormat, Records: r.records, Bytes: r.n, SHA256: hex.EncodeToString(r.h.Sum(nil))}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteAtomic(filepath.Join(dir, runDoneFile), append(b, '\n')); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, runCheckpointFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func (r *recorder) close() { r.f.Close() }
