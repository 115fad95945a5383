package run

import (
	"compress/gzip"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"

	"hgpsim/graph"
	"hgpsim/internal/fsutil"
	"hgpsim/optim"
	"hgpsim/scenarios"
)

// LinksPicture is the file, in a run's folder, that shows the recorded
// link behaviour (see Options.RecordLinks).
const LinksPicture = "links.png"

// CheckRecordPath checks the name of a links recording: gzip-compressed
// CSV or JSONL, told apart by the name.
func CheckRecordPath(path string) error {
	if !strings.HasSuffix(path, ".csv.gz") && !strings.HasSuffix(path, ".jsonl.gz") {
		return fmt.Errorf("a links recording is gzip-compressed CSV or JSONL: name it *.csv.gz or *.jsonl.gz, got %q", path)
	}
	return nil
}

// ReplayLinks returns the --set that puts a trace process reading path in
// place of the scenario's link process, failing if the run outlives it.
func ReplayLinks(path string) (scenarios.Set, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return scenarios.Set{}, err
	}
	q := strings.ReplaceAll(strings.ReplaceAll(abs, `\`, `\\`), `"`, `\"`)
	return scenarios.ParseSet(fmt.Sprintf(`network.links={kind: trace, file: "%s", end: fail}`, q))
}

// linkSink follows the communication rounds of a run from its phase
// reports: it records the links each phase realized (Options.RecordLinks)
// and fails a run that outlives a trace whose end policy is fail. Every
// realization is a pure function of the round, so the supervisor can
// recompute what the clients saw, in any driver and over workers, without
// asking them.
type linkSink struct {
	optim.Sink
	nw    *graph.Network
	tick  uint64
	trace graph.LinkTrace // when the run must not outlive it
	rec   *graph.TraceRecorder
	f     *os.File
	gz    *gzip.Writer
	path  string
	// phases, when not nil, lists each phase's rounds (PhasesFile).
	phases *phaseLog
}

// newLinkSink wraps s; record, when not empty, names the recording.
func newLinkSink(s optim.Sink, nw *graph.Network, record string) (*linkSink, error) {
	l := &linkSink{Sink: s, nw: nw}
	if t, ok := nw.Process.(graph.LinkTrace); ok && t.FailsPastEnd() {
		l.trace = t
	}
	if record == "" {
		return l, nil
	}
	if err := CheckRecordPath(record); err != nil {
		return nil, scenarios.Invalid("--record-links", "%v", err)
	}
	f, err := os.CreateTemp(filepath.Dir(record), filepath.Base(record)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("recording links: %w", err)
	}
	l.f, l.path = f, record
	l.gz = gzip.NewWriter(f)
	l.rec = graph.NewTraceRecorder(l.gz, nw, strings.HasSuffix(record, ".jsonl.gz"))
	return l, nil
}

// Finished implements optim.Sink.
func (l *linkSink) Finished(rep *optim.PhaseReport) error {
	spec := rep.Spec
	if spec.Tick >= 0 {
		l.tick = uint64(spec.Tick)
	}
	end := l.tick + uint64(spec.Rounds)
	if err := l.phases.write(spec, l.tick); err != nil {
		return err
	}
	if l.trace != nil && end > l.trace.Rounds() {
		return fmt.Errorf("phase %s ran to round %d, past the end of the links trace (%d rounds; its end policy is fail)",
			spec.Name, end-1, l.trace.Rounds())
	}
	if l.rec != nil && spec.Rounds > 0 {
		if spec.Offset == 0 {
			l.rec.Comment(fmt.Sprintf("phase %s, step %d: from round %d", spec.Name, spec.Step, l.tick))
		}
		if err := l.rec.RecordTo(end); err != nil {
			return fmt.Errorf("recording links: %w", err)
		}
	}
	l.tick = end
	return l.Sink.Finished(rep)
}

// finish completes the recording when the run succeeded (the file
// appears whole, atomically, and links.png in dir) and otherwise removes
// it.
func (l *linkSink) finish(ok bool, dir string) error {
	if l.rec == nil {
		return nil
	}
	tmp := l.f.Name()
	if !ok {
		l.f.Close()
		os.Remove(tmp)
		return nil
	}
	err := l.rec.Close()
	if err == nil {
		err = l.gz.Close()
	}
	if err == nil {
		err = l.f.Chmod(0o644) // CreateTemp's 0600 is for the half-written file
	}
	if err == nil {
		err = l.f.Sync()
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("recording links: %w", err)
	}
	if a := l.rec.Availability(); a != nil {
		return writeHeatmap(filepath.Join(dir, LinksPicture), a)
	}
	return nil
}

// writeHeatmap draws availability as a clients × clients picture: row i,
// column j is the share of rounds link i→j was up, from white (never) to
// dark blue (always); the diagonal is grey.
func writeHeatmap(path string, a [][]float64) error {
	n := len(a)
	cell := max(1, 512/n)
	img := image.NewRGBA(image.Rect(0, 0, n*cell, n*cell))
	for i, row := range a {
		for j, v := range row {
			c := color.RGBA{R: uint8(255 * (1 - 0.9*v)), G: uint8(255 * (1 - 0.7*v)), B: uint8(255 * (1 - 0.3*v)), A: 255}
			if i == j {
				c = color.RGBA{R: 160, G: 160, B: 160, A: 255}
			}
			for y := i * cell; y < (i+1)*cell; y++ {
				for x := j * cell; x < (j+1)*cell; x++ {
					img.SetRGBA(x, y, c)
				}
			}
		}
	}
	var b strings.Builder
	if err := png.Encode(&b, img); err != nil {
		return err
	}
	return fsutil.WriteAtomic(path, []byte(b.String()))
}
