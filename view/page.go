package view

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"path"
)

// scripts are the page's scripts in load order.
var scripts = []string{"app.js", "curves.js", "run.js", "sweep.js"}

// Page returns the page with its style and scripts inlined and, when data
// is not nil, the data a file written by --html carries (otherwise the
// page asks the server).
func Page(data any) ([]byte, error) {
	html, err := assets.ReadFile("assets/index.html")
	if err != nil {
		return nil, err
	}
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return nil, err
	}
	var js bytes.Buffer
	for _, s := range scripts {
		b, err := assets.ReadFile("assets/" + s)
		if err != nil {
			return nil, err
		}
		js.Write(b)
		js.WriteByte('\n')
	}
	out := bytes.Replace(html, []byte("/*STYLE*/"), css, 1)
	out = bytes.Replace(out, []byte("/*SCRIPT*/"), js.Bytes(), 1)
	var d []byte
	if data != nil {
		// json.Marshal escapes <, > and &, so the data cannot close the
		// script element.
		b, err := json.Marshal(data)
		if err != nil {
			return nil, err
		}
		d = append(append([]byte("<script>window.HGPSIM_DATA = "), b...), ";</script>"...)
	}
	return bytes.Replace(out, []byte("<!--DATA-->"), d, 1), nil
}

// offlineRun is a run as a file written by --html carries it.
type offlineRun struct {
	Info    Info              `json:"info"`
	Metrics []json.RawMessage `json:"metrics"`
	Rounds  []RoundState      `json:"rounds"`
}

// offlineData is what a file written by --html carries: the sweep (nil
// for a run), its runs by folder ("." for a run's page) and its plots as
// data URLs.
type offlineData struct {
	Sweep *Sweep                 `json:"sweep,omitempty"`
	Runs  map[string]*offlineRun `json:"runs"`
	Files map[string]string      `json:"files"`
}

// WriteHTML writes the page of the folder as one file that needs no
// server and no network: the same page with the data inlined. A run's
// rounds are inlined up to maxRounds link states in all; the rounds past
// it are left out, and the returned note says so.
func (s *Server) WriteHTML(w io.Writer, maxStates int64) (note string, err error) {
	d := offlineData{Runs: map[string]*offlineRun{}, Files: map[string]string{}}
	budget := maxStates
	var cut []string
	add := func(rel string) error {
		rv, err := s.run(rel)
		if err != nil {
			return err
		}
		m, err := readMetrics(s.root, path.Join(rel, "metrics.jsonl"), 0, 1<<40)
		if err != nil {
			return err
		}
		or := &offlineRun{Info: rv.info, Metrics: m.Rows, Rounds: []RoundState{}}
		if rv.nw != nil {
			links := int64(max(1, len(rv.info.Links)))
			n := min(int64(rv.info.Rounds), max(0, budget/links))
			budget -= n * links
			if uint64(n) < rv.info.Rounds {
				cut = append(cut, fmt.Sprintf("%s: rounds 0 … %d of %d", rv.info.Name, n, rv.info.Rounds))
			}
			for from := int64(0); from < n; from += maxWindow {
				rs, err := rv.rounds(uint64(from), int(min(maxWindow, n-from)))
				if err != nil {
					return err
				}
				or.Rounds = append(or.Rounds, rs...)
			}
		}
		d.Runs[rel] = or
		return nil
	}
	if s.IsSweep() {
		sw, err := readSweep(s.root, s.dir)
		if err != nil {
			return "", err
		}
		d.Sweep = sw
		for _, p := range sw.Plots {
			b, err := s.root.ReadFile(p)
			if err != nil {
				return "", err
			}
			d.Files[p] = "data:" + mime.TypeByExtension(".png") + ";base64," + base64.StdEncoding.EncodeToString(b)
		}
		for _, r := range sw.Runs {
			if _, err := s.root.Stat(path.Join(r.Dir, "scenario.yaml")); err != nil {
				continue // not started
			}
			if err := add(r.Dir); err != nil {
				return "", fmt.Errorf("%s: %w", r.Dir, err)
			}
		}
	} else if err := add("."); err != nil {
		return "", err
	}
	page, err := Page(d)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(page); err != nil {
		return "", err
	}
	if len(cut) > 0 {
		note = fmt.Sprintf("link states of the rounds past %d in all left out: %v", maxStates, cut)
	}
	return note, nil
}
