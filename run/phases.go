package run

import (
	"fmt"
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
// A resumed run appends; a part it ran again is listed twice, the same
// both times.
const PhasesFile = "phases.jsonl"

// phaseLog appends the phase lines to PhasesFile.
type phaseLog struct {
	f   *os.File
	buf []byte
}

// openPhaseLog creates dir's PhasesFile, or appends to it when resuming.
func openPhaseLog(dir string, resume bool) (*phaseLog, error) {
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if resume {
		flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(filepath.Join(dir, PhasesFile), flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("phases file: %w", err)
	}
	return &phaseLog{f: f}, nil
}

// write appends the line of a part that started at tick; one write(2) a
// line, like metrics.jsonl, so a killed run leaves whole lines.
func (p *phaseLog) write(spec *optim.PhaseSpec, tick uint64) error {
	if p == nil || spec.Rounds == 0 {
		return nil
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
