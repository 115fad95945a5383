package view

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// SweepRun is one run of a sweep as the page lists it.
type SweepRun struct {
	Dir    string            `json:"dir"`
	Name   string            `json:"name"`
	Method string            `json:"method"`
	Seed   uint64            `json:"seed"`
	Vary   []json.RawMessage `json:"vary"`
	// Status is done (summary.json), failed (error.txt), started
	// (metrics.jsonl, no result yet) or pending.
	Status string `json:"status"`
}

// Sweep is a sweep folder's state: its runs and their progress, its
// study table and plots.
type Sweep struct {
	Kind  string     `json:"kind"` // "sweep"
	Name  string     `json:"name"`
	Runs  []SweepRun `json:"runs"`
	Done  int        `json:"done"`
	Fail  int        `json:"failed"`
	Total int        `json:"total"`
	// Elapsed is the seconds since the sweep was planned (sweep.json
	// written) until its last result, and Left the estimated seconds to
	// go (−1: not known yet, or nothing left).
	Elapsed float64 `json:"elapsed"`
	Left    float64 `json:"left"`
	// Study is study.md as written (empty while the sweep runs).
	Study string `json:"study"`
	// Plots are the folder's PNG files.
	Plots []string `json:"plots"`
}

// readSweep reads the sweep in root (the folder dir).
func readSweep(root *os.Root, dir string) (*Sweep, error) {
	b, err := root.ReadFile("sweep.json")
	if err != nil {
		return nil, errNotFound
	}
	var sj struct {
		Runs []struct {
			Dir    string            `json:"dir"`
			Name   string            `json:"name"`
			Method string            `json:"method"`
			Seed   uint64            `json:"seed"`
			Vary   []json.RawMessage `json:"vary"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &sj); err != nil {
		return nil, fmt.Errorf("sweep.json: %w", err)
	}
	sw := &Sweep{Kind: "sweep", Name: path.Base(dir), Total: len(sj.Runs), Left: -1, Plots: []string{}}
	st, err := root.Stat("sweep.json")
	if err != nil {
		return nil, err
	}
	began, last := st.ModTime(), st.ModTime()
	for _, r := range sj.Runs {
		c, err := clean(r.Dir)
		if err != nil {
			continue // not below the folder: not shown
		}
		sr := SweepRun{Dir: c, Name: r.Name, Method: r.Method, Seed: r.Seed, Vary: r.Vary, Status: "pending"}
		if fi, err := root.Stat(path.Join(c, "summary.json")); err == nil {
			sr.Status = "done"
			sw.Done++
			last = later(last, fi.ModTime())
		} else if fi, err := root.Stat(path.Join(c, "error.txt")); err == nil {
			sr.Status = "failed"
			sw.Fail++
			last = later(last, fi.ModTime())
		} else if _, err := root.Stat(path.Join(c, "metrics.jsonl")); err == nil {
			sr.Status = "started"
		}
		sw.Runs = append(sw.Runs, sr)
	}
	if sw.Runs == nil {
		sw.Runs = []SweepRun{}
	}
	finished := sw.Done + sw.Fail
	sw.Elapsed = last.Sub(began).Seconds()
	if finished > 0 && finished < sw.Total {
		// The rate so far, over all the jobs that run at once.
		now := time.Since(began).Seconds()
		sw.Left = now / float64(finished) * float64(sw.Total-finished)
		sw.Elapsed = now
	}
	if md, err := root.ReadFile("study.md"); err == nil {
		sw.Study = string(md)
	}
	ents, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".png") {
			sw.Plots = append(sw.Plots, e.Name())
		}
	}
	sort.Strings(sw.Plots)
	return sw, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
