package view

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

//go:embed assets
var assets embed.FS

// maxMetricsChunk bounds the bytes of metrics.jsonl one request returns;
// the page asks again from the offset it got back.
const maxMetricsChunk = 4 << 20

// Server serves the page of one folder, a run or a sweep, read only.
// Nothing outside the folder is read on a request's behalf: paths are
// opened through an os.Root, which refuses "..", absolute paths and
// symbolic links that lead out.
type Server struct {
	dir   string // absolute
	root  *os.Root
	token string

	mu   sync.Mutex
	runs map[string]*runView // by folder, relative to dir ("" for dir)
}

// New opens dir for serving. A non-empty token must then be given with
// every request (?token= or the Authorization: Bearer header).
func New(dir, token string) (*Server, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	return &Server{dir: abs, root: root, token: token, runs: map[string]*runView{}}, nil
}

// Close releases the folder.
func (s *Server) Close() error { return s.root.Close() }

// IsSweep reports whether the folder is a sweep's (it has sweep.json).
func (s *Server) IsSweep() bool {
	_, err := s.root.Stat("sweep.json")
	return err == nil
}

// ServeHTTP implements http.Handler:
//
//	/                     the page (index.html; ?run=REL selects a run of a sweep)
//	/assets/…             its script and style
//	/api/info?run=REL     a run's Info
//	/api/metrics?run=REL&offset=N   metrics.jsonl's whole lines from byte N
//	/api/rounds?run=REL&from=T&count=C   the link states of rounds T … T+C−1
//	/api/sweep            a sweep's runs, progress, table and plots
//	/file/REL             a file of the folder (plots)
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "read only", http.StatusMethodNotAllowed)
		return
	}
	if s.token != "" && !s.authorized(r) {
		http.Error(w, "a token is required", http.StatusUnauthorized)
		return
	}
	if s.token == "" && !loopbackHost(r.Host) {
		// Without a token the page is for this machine only: a web page
		// elsewhere that points its own name at 127.0.0.1 (DNS
		// rebinding) must not read it.
		http.Error(w, "served for 127.0.0.1 only", http.StatusForbidden)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	p := r.URL.Path
	switch {
	case p == "/" || p == "/index.html":
		page, err := Page(nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	case p == "/api/info":
		s.serveInfo(w, r)
	case p == "/api/metrics":
		s.serveMetrics(w, r)
	case p == "/api/rounds":
		s.serveRounds(w, r)
	case p == "/api/sweep":
		sw, err := readSweep(s.root, s.dir)
		if err != nil {
			httpError(w, err)
			return
		}
		writeJSON(w, sw)
	case strings.HasPrefix(p, "/file/"):
		s.serveFile(w, strings.TrimPrefix(p, "/file/"))
	default:
		http.NotFound(w, r)
	}
}

// authorized reports whether r carries the token, compared in constant
// time.
func (s *Server) authorized(r *http.Request) bool {
	tok := r.URL.Query().Get("token")
	if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		tok = h
	}
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
}

// loopbackHost reports whether a request's Host names this machine by
// a loopback address or localhost.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// errNotFound is a path the folder does not serve.
var errNotFound = errors.New("not found")

// badRequest is an error in a request's parameters.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

func httpError(w http.ResponseWriter, err error) {
	var br badRequest
	switch {
	case errors.As(err, &br):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case errors.Is(err, errNotFound), errors.Is(err, fs.ErrNotExist):
		http.Error(w, "not found", http.StatusNotFound)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// clean checks a folder-relative path from a request: no absolute path, no
// "..", nothing but forward slashes. The os.Root that opens it refuses
// symbolic links out of the folder as well.
func clean(rel string) (string, error) {
	if rel == "" || rel == "." {
		return ".", nil
	}
	if strings.Contains(rel, `\`) || strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) {
		return "", errNotFound
	}
	c := path.Clean(rel)
	for _, part := range strings.Split(c, "/") {
		if part == ".." {
			return "", errNotFound
		}
	}
	return c, nil
}

// run returns the opened run folder rel (relative to the served folder),
// re-reading what a running run changes.
func (s *Server) run(rel string) (*runView, error) {
	c, err := clean(rel)
	if err != nil {
		return nil, err
	}
	st, err := s.root.Stat(path.Join(c, "scenario.yaml"))
	if err != nil || !st.Mode().IsRegular() {
		return nil, errNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rv := s.runs[c]
	if rv == nil || (rv.nw == nil && !rv.info.Done) {
		name := filepath.Base(s.dir)
		if c != "." {
			name = c
		}
		if rv, err = openRun(s.root, c, filepath.Join(s.dir, filepath.FromSlash(c)), name); err != nil {
			return nil, err
		}
		s.runs[c] = rv
	} else if !rv.info.Done {
		rv.refresh()
	}
	return rv, nil
}

func (s *Server) serveInfo(w http.ResponseWriter, r *http.Request) {
	rv, err := s.run(r.URL.Query().Get("run"))
	if err != nil {
		httpError(w, err)
		return
	}
	s.mu.Lock()
	info := rv.info
	s.mu.Unlock()
	writeJSON(w, info)
}

// Metrics is a chunk of metrics.jsonl: its whole lines from the requested
// offset, and the offset to ask from next.
type Metrics struct {
	Next int64             `json:"next"`
	Rows []json.RawMessage `json:"rows"`
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	c, err := clean(q.Get("run"))
	if err != nil {
		httpError(w, err)
		return
	}
	off, err := strconv.ParseInt(q.Get("offset"), 10, 64)
	if q.Get("offset") == "" {
		off, err = 0, nil
	}
	if err != nil || off < 0 {
		httpError(w, badRequest{"offset: a byte offset >= 0"})
		return
	}
	m, err := readMetrics(s.root, path.Join(c, "metrics.jsonl"), off, maxMetricsChunk)
	if err != nil {
		httpError(w, err)
		return
	}
	writeJSON(w, m)
}

// readMetrics returns the whole lines of name from off, at most limit
// bytes of them (at least one line, however long). A line still being
// written is left for the next request.
func readMetrics(root *os.Root, name string, off int64, limit int) (*Metrics, error) {
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &Metrics{Next: 0, Rows: []json.RawMessage{}}, nil // not started yet
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if off > st.Size() {
		off = 0 // the file was replaced by a new run
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	buf := make([]byte, min(st.Size()-off, int64(limit)))
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n') + 1
	for end == 0 && n == limit { // one line longer than limit
		more := make([]byte, limit)
		k, _ := f.Read(more)
		if k == 0 {
			break
		}
		buf = append(buf, more[:k]...)
		end = bytes.LastIndexByte(buf, '\n') + 1
	}
	m := &Metrics{Next: off + int64(end), Rows: []json.RawMessage{}}
	for _, line := range bytes.Split(buf[:end], []byte{'\n'}) {
		if len(line) > 0 && json.Valid(line) {
			m.Rows = append(m.Rows, json.RawMessage(line))
		}
	}
	return m, nil
}

// Rounds is a window of rounds' link states.
type Rounds struct {
	From   uint64       `json:"from"`
	Rounds []RoundState `json:"rounds"`
}

func (s *Server) serveRounds(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	rv, err := s.run(q.Get("run"))
	if err != nil {
		httpError(w, err)
		return
	}
	from, err1 := strconv.ParseUint(q.Get("from"), 10, 64)
	count, err2 := strconv.Atoi(q.Get("count"))
	if err1 != nil || err2 != nil || count < 1 {
		httpError(w, badRequest{"from and count: a round >= 0 and a number of rounds >= 1"})
		return
	}
	s.mu.Lock()
	known := rv.info.Rounds
	s.mu.Unlock()
	count = min(count, maxWindow)
	if from >= known {
		count = 0
	} else {
		count = int(min(uint64(count), known-from))
	}
	rs, err := rv.rounds(from, count)
	if err != nil {
		httpError(w, err)
		return
	}
	writeJSON(w, Rounds{From: from, Rounds: rs})
}

// serveFile serves a regular file of the folder.
func (s *Server) serveFile(w http.ResponseWriter, rel string) {
	c, err := clean(rel)
	if err != nil || c == "." {
		httpError(w, errNotFound)
		return
	}
	f, err := s.root.Open(c)
	if err != nil {
		httpError(w, errNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		httpError(w, errNotFound)
		return
	}
	if ct := mime.TypeByExtension(path.Ext(c)); ct != "" {
		w.Header().Set("Content-Type", ct)
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	io.Copy(w, f)
}
