package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"hgpsim/optim"
)

// PhasesFile is the file, in a run's folder, that lists the phases the
// run went through with the communication rounds (ticks) each covered, one
// JSON object a line, written as each phase (or checkpointed part of one)
// ends:
//
//	{"phase":"sgp","step":0,"tick":0,"rounds":30,"offset":0}
//
// tick is the first round of the part, rounds its length and offset the
// phase's round it starts at. It ties metrics.jsonl, whose rounds count
// within a phase, to the rounds the links are realized at (hgpsim view).
// A resumed run keeps the lines of the parts that started before the first
// part it runs, so the file ends as a run that never stopped writes it.
const PhasesFile = "phases.jsonl"

// phaseLog appends the phase lines to PhasesFile.
type phaseLog struct {
	f   *os.File
	buf []byte
	// When resuming, kept holds the whole lines the file had; the first
	// write (restart) keeps those of parts that started before it and
	// drops the rest (parts the resumed run runs again).
	resuming bool
	kept     [][]byte
}

// openPhaseLog creates dir's PhasesFile, or opens it to continue when
// resuming.
func openPhaseLog(dir string, resume bool) (*phaseLog, error) {
	path := filepath.Join(dir, PhasesFile)
	if !resume {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("phases file: %w", err)
		}
		return &phaseLog{f: f}, nil
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("phases file: %w", err)
	}
	p := &phaseLog{resuming: true}
	for len(old) > 0 {
		i := bytes.IndexByte(old, '\n')
		if i < 0 {
			break // a line cut by a kill
		}
		p.kept = append(p.kept, old[:i+1])
		old = old[i+1:]
	}
	if p.f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644); err != nil {
		return nil, fmt.Errorf("phases file: %w", err)
	}
	return p, nil
}

// restart rewrites the file with the kept lines of parts that started
// before tick, and positions it after them.
func (p *phaseLog) restart(tick uint64) error {
	var b []byte
	for _, line := range p.kept {
		var l struct{ Tick uint64 }
		if json.Unmarshal(line, &l) == nil && l.Tick < tick {
			b = append(b, line...)
		}
	}
	p.kept, p.resuming = nil, false
	if err := p.f.Truncate(0); err != nil {
		return fmt.Errorf("phases file: %w", err)
	}
	if _, err := p.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("phases file: %w", err)
	}
	if _, err := p.f.Seek(int64(len(b)), io.SeekStart); err != nil {
		return fmt.Errorf("phases file: %w", err)
	}
	return nil
}

// write appends the line of a part that started at tick; one write(2) a
// line, like metrics.jsonl, so a killed run leaves whole lines.
func (p *phaseLog) write(spec *optim.PhaseSpec, tick uint64) error {
	if p == nil || spec.Rounds == 0 {
		return nil
	}
	if p.resuming {
		if err := p.restart(tick); err != nil {
			return err
		}
	}
	b := append(p.buf[:0], `{"phase":`...)
	b = strconv.AppendQuote(b, spec.Name)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(spec.Step), 10)
	b = append(b, `,"tick":`...)
	b = strconv.AppendUint(b, tick, 10)
	b = append(b, `,"rounds":`...)
	b = strconv.AppendInt(b, int64(spec.Rounds), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(spec.Offset), 10)
	b = append(b, "}\n"...)
	p.buf = b
	if _, err := p.f.Write(b); err != nil {
		return fmt.Errorf("phases file: %w", err)
	}
	return nil
}

// close closes the file.
func (p *phaseLog) close() error {
	if p == nil {
		return nil
	}
	return p.f.Close()
}
