package view

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// chromiumPath is Debian's chromium, which the browser tests drive
// headless.
const chromiumPath = "/usr/bin/chromium"

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("needs a headless browser: install Debian's chromium package (apt-get install chromium)")
	}
}

// chromium runs the browser headless on url with the extra flags and
// returns its standard output.
func chromium(t *testing.T, url string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir()}, flags...)
	cmd := exec.CommandContext(ctx, chromiumPath, append(args, url)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

// dumpDOM returns the page's DOM once it has rendered: virtual time lets
// its requests finish before the dump.
func dumpDOM(t *testing.T, url string) string {
	t.Helper()
	dom := chromium(t, url, "--virtual-time-budget=15000", "--dump-dom")
	if !strings.Contains(dom, "data-render-ms=") {
		t.Fatalf("%s: the page did not finish rendering:\n%.3000s", url, dom)
	}
	return dom
}

var (
	tagRe  = regexp.MustCompile(`<(line|circle|polyline|svg) [^>]*>`)
	attrRe = regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
)

// elements returns the attributes of the DOM's elements of kind tag with
// attribute class equal to class (any class when empty).
func elements(dom, tag, class string) []map[string]string {
	var out []map[string]string
	for _, m := range tagRe.FindAllStringSubmatch(dom, -1) {
		if m[1] != tag {
			continue
		}
		a := map[string]string{}
		for _, kv := range attrRe.FindAllStringSubmatch(m[0], -1) {
			a[kv[1]] = kv[2]
		}
		if class == "" || a["class"] == class {
			out = append(out, a)
		}
	}
	return out
}

// checkPartitionPage checks the page of the partition run at round 7
// (inside the partition) and the train_loss curve against metrics.jsonl.
func checkPartitionPage(t *testing.T, dom string, evaluations int) {
	t.Helper()
	links := elements(dom, "line", "link")
	if len(links) != 30 {
		t.Fatalf("%d links drawn, want the 30 of 6 fully connected clients", len(links))
	}
	down := 0
	for _, l := range links {
		var a, b int
		fmt.Sscan(l["data-from"], &a)
		fmt.Sscan(l["data-to"], &b)
		cross := (a < 3) != (b < 3)
		if (l["data-state"] == "down") != cross {
			t.Errorf("link %d→%d is drawn %s", a, b, l["data-state"])
		}
		if cross && l["data-cause"] != "cut" {
			t.Errorf("link %d→%d down but not marked cut (cause %q)", a, b, l["data-cause"])
		}
		if l["data-state"] == "down" {
			down++
		}
	}
	if down != 18 {
		t.Errorf("%d links drawn down, want the 18 the partition cuts", down)
	}
	coloured := 0
	for _, c := range elements(dom, "circle", "node") {
		if c["fill"] != "#fff" && c["fill"] != "" {
			coloured++
		}
	}
	if coloured != 6 {
		t.Errorf("%d clients coloured by their push-sum weight, want 6", coloured)
	}
	i := strings.Index(dom, `data-metric="train_loss"`)
	if i < 0 {
		t.Fatal("no train_loss curve")
	}
	aggs := elements(dom[i:], "polyline", "agg")
	if len(aggs) == 0 {
		t.Fatal("the train_loss curve has no aggregate line")
	}
	points := len(strings.Fields(aggs[0]["points"]))
	if fmt.Sprint(points) != aggs[0]["data-points"] {
		t.Errorf("polyline has %d points, says %s", points, aggs[0]["data-points"])
	}
	if marks := elements(dom[i:], "line", "blowup"); len(marks) == 0 || marks[0]["data-round"] != "9" {
		t.Errorf("the divergence at round 9 is not marked on the train_loss curve: %v", marks)
	}
	if points != evaluations {
		t.Errorf("the train_loss curve has %d points, metrics.jsonl %d evaluations of it", points, evaluations)
	}
}

// evaluations counts metrics.jsonl's aggregate rows with key.
func evaluations(t *testing.T, dir, key string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if _, ok := row[key]; ok && row["client"] == "all" {
			n++
		}
	}
	return n
}

// artefacts is where the screenshots go: $HGPSIM_VIEW_ARTEFACTS, or a
// temporary folder.
func artefacts(t *testing.T) string {
	if d := os.Getenv("HGPSIM_VIEW_ARTEFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func TestBrowserPartition(t *testing.T) {
	needChromium(t)
	dir := runScenario(t, partitionScenario, false)
	// A divergence record in summary.json (its entries say phase, outer
	// step and round) is marked on the curves.
	sum, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum = append([]byte(`{"divergence": [{"phase": "sgp", "outer": 0, "round": 9, "metric": "train_loss"}], `), sum[1:]...)
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, dir, "")
	evals := evaluations(t, dir, "train_loss")
	if evals != 5 {
		t.Fatalf("metrics.jsonl has %d train_loss evaluations, want 5 (20 rounds, every 4)", evals)
	}
	dom := dumpDOM(t, ts.URL+"/?round=7")
	if !strings.Contains(dom, `data-round="7"`) {
		t.Fatal("the page is not at round 7")
	}
	checkPartitionPage(t, dom, evals)

	// Outside the partition every link is up.
	for _, l := range elements(dumpDOM(t, ts.URL+"/?round=16"), "line", "link") {
		if l["data-state"] != "up" {
			t.Errorf("round 16: link %s→%s drawn %s", l["data-from"], l["data-to"], l["data-state"])
		}
	}

	// The file written by --html shows the same without a server.
	s, err := New(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	html := filepath.Join(t.TempDir(), "page.html")
	f, err := os.Create(html)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteHTML(f, 1<<30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ts.Close() // nothing to ask
	checkPartitionPage(t, dumpDOM(t, "file://"+html+"?round=7"), evals)

	shot := filepath.Join(artefacts(t), "view-partition.png")
	chromium(t, "file://"+html+"?round=7", "--virtual-time-budget=15000", "--window-size=1200,1300", "--screenshot="+shot)
	pf, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil || img.Bounds().Dx() != 1200 {
		t.Fatalf("screenshot %s: %v, bounds %v", shot, err, img.Bounds())
	}
	t.Logf("screenshot: %s", shot)
}

// The page of a run still going follows metrics.jsonl: evaluations
// written after the page rendered appear without a reload.
func TestBrowserFollowsRun(t *testing.T) {
	needChromium(t)
	sc, err := scenarios.Parse("live.yaml", []byte(strings.Replace(partitionScenario, "sgp: {rounds: 20, batch: 5, eval_every: 4}",
		"sgp: {rounds: 1000000, batch: 5, eval_every: 200}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "live")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := run.Execute(ctx, sc, run.Options{OutDir: dir})
		done <- err
	}()
	// Wait for the first evaluations, then open the page.
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(filepath.Join(dir, "metrics.jsonl")); err == nil && st.Size() > 0 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("the run wrote no metrics in 30 s")
		}
	}
	ts := serve(t, dir, "")
	dom := chromium(t, ts.URL+"/", "--virtual-time-budget=20000", "--dump-dom")
	cancel()
	<-done
	get := func(attr string) int {
		m := regexp.MustCompile(attr + `="([0-9]+)"`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("no %s in the page:\n%s", attr, dom[strings.Index(dom, "<body"):min(len(dom), strings.Index(dom, "<body")+1500)])
		}
		var n int
		fmt.Sscan(m[1], &n)
		return n
	}
	first, last := get("data-first-evals"), get("data-evals")
	if last <= first {
		t.Errorf("the page showed %d evaluations when it rendered and %d at the end: it did not follow the run", first, last)
	}
	t.Logf("evaluations: %d at first render, %d later", first, last)
}
