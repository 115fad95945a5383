package run

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"

	"hgpsim/internal/fsutil"
	"hgpsim/scenarios"
)

// Files of a sweep's folders beside those of a run.
const (
	// sweepFile lists a sweep's runs (SweepManifest).
	sweepFile = "sweep.json"
	// runErrorFile holds the error of a sweep's run that failed.
	runErrorFile = "error.txt"
	// sweepFormat names the layout of sweep.json.
	sweepFormat = "hgpsim sweep 1"
)

// SweepManifest is a sweep folder's sweep.json: what each run of the
// study is (everything its tables say about a run beside its results)
// and which tables were asked for, so that the tables can be rebuilt from
// the run folders alone. It holds nothing that depends on when or how
// fast the sweep ran.
type SweepManifest struct {
	Format string `json:"format"`
	// Plot and Curves are the --plot and --curves metrics.
	Plot   string        `json:"plot"`
	Curves string        `json:"curves,omitempty"`
	Runs   []ManifestRun `json:"runs"`
}

// ManifestRun is one run of a sweep.
type ManifestRun struct {
	Dir     string       `json:"dir"` // the run folder, relative to the sweep's
	Name    string       `json:"name"`
	File    string       `json:"file"`
	Base    string       `json:"base"`
	Method  string       `json:"method"`
	Network string       `json:"network"`
	Seed    uint64       `json:"seed"`
	Vary    []Assignment `json:"vary,omitempty"`
}

// WriteSweepManifest writes dir/sweep.json for jobs, whose folders must lie
// below dir.
func WriteSweepManifest(dir string, jobs []SweepJob, plot, curves string) error {
	m := SweepManifest{Format: sweepFormat, Plot: plot, Curves: curves}
	for _, j := range jobs {
		rel, err := filepath.Rel(dir, j.OutDir)
		if err != nil || !filepath.IsLocal(rel) {
			return fmt.Errorf("run folder %s is not below the sweep folder %s", j.OutDir, dir)
		}
		m.Runs = append(m.Runs, ManifestRun{Dir: filepath.ToSlash(rel), Name: j.Scenario.Name, File: j.File, Base: j.Base,
			Method: j.Method, Network: j.Scenario.Network.Topology.Name, Seed: j.Scenario.Seed, Vary: j.Vary})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteAtomic(filepath.Join(dir, sweepFile), append(b, '\n'))
}

// ReadSweepManifest reads dir/sweep.json.
func ReadSweepManifest(dir string) (*SweepManifest, error) {
	path := filepath.Join(dir, sweepFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, scenarios.Invalid(dir, "no %s: not the folder of a sweep (or of one from before sweeps recorded their runs)", sweepFile)
	}
	if err != nil {
		return nil, err
	}
	var m SweepManifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, scenarios.Invalid(path, "%v", err)
	}
	if m.Format != sweepFormat {
		return nil, scenarios.Invalid(path, "format %q, want %q", m.Format, sweepFormat)
	}
	for _, r := range m.Runs {
		if !filepath.IsLocal(filepath.FromSlash(r.Dir)) {
			return nil, scenarios.Invalid(path, "run folder %q is not below the sweep's folder", r.Dir)
		}
	}
	return &m, nil
}

// Job returns the job r describes, below the sweep folder dir: enough of
// its scenario for the tables (name, seed, network), not the scenario.
func (r ManifestRun) Job(dir string) SweepJob {
	j := SweepJob{OutDir: filepath.Join(dir, filepath.FromSlash(r.Dir)), File: r.File, Base: r.Base, Method: r.Method, Vary: r.Vary}
	j.Scenario.Name, j.Scenario.Seed, j.Scenario.Network.Topology.Name = r.Name, r.Seed, r.Network
	return j
}

// Folder is what a run folder says about its run.
type Folder struct {
	// Summary is summary.json with Evals read back from metrics.jsonl, or,
	// for a run that did not complete, only the Evals it wrote. An Eval's
	// Traffic is not in metrics.jsonl and stays zero.
	Summary *Summary
	// Complete says summary.json exists; Failure says why not, otherwise.
	Complete bool
	Failure  string
}

// LoadRun reads the run folder dir without running anything.
func LoadRun(dir string) (Folder, error) {
	var f Folder
	evals, err := readEvals(filepath.Join(dir, metricsFile))
	if err != nil {
		return f, err
	}
	b, err := os.ReadFile(filepath.Join(dir, summaryFile))
	switch {
	case err == nil:
		var sum Summary
		if err := UnmarshalFinite(b, &sum); err != nil {
			return f, scenarios.Invalid(filepath.Join(dir, summaryFile), "%v", err)
		}
		sum.Evals = evals
		f.Summary, f.Complete = &sum, true
		return f, nil
	case !errors.Is(err, os.ErrNotExist):
		return f, err
	}
	f.Summary = &Summary{Evals: evals}
	if msg, err := os.ReadFile(filepath.Join(dir, runErrorFile)); err == nil {
		f.Failure = string(bytes.TrimSpace(msg))
	} else {
		f.Failure = "did not complete (no summary.json)"
	}
	return f, nil
}

// readEvals reads the evaluations of a run's training phases back from
// metrics.jsonl: its aggregate lines ("client":"all") that have losses. A
// null reads as NaN; a line cut short by a killed run is ignored. A
// missing file has none.
func readEvals(path string) ([]scenarios.Eval, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []scenarios.Eval
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		b := sc.Bytes()
		if !bytes.Contains(b, []byte(`"client":"all"`)) {
			continue
		}
		var raw map[string]json.RawMessage
		if json.Unmarshal(b, &raw) != nil {
			continue // the last line of a killed run
		}
		if _, ok := raw["hypergradient_norm"]; ok {
			continue // a hyper-gradient round
		}
		var e scenarios.Eval
		if json.Unmarshal(raw["outer"], &e.Step) != nil || json.Unmarshal(raw["phase"], &e.Phase) != nil ||
			json.Unmarshal(raw["round"], &e.Round) != nil {
			return nil, scenarios.Invalid(path, "an aggregate line without outer, phase and round: %.200s", b)
		}
		// A value present was measured: its count reads as 1 (the exact
		// counts are not in metrics.jsonl; a consensus distance, as 2, the
		// fewest clients one is measured over), one absent stays unmeasured.
		for key, c := range map[string]*int{"train_loss": &e.Agg.TrainClients, "val_acc": &e.Agg.ValRows,
			"test_acc": &e.Agg.TestRows} {
			if _, ok := raw[key]; ok {
				*c = 1
			}
		}
		if _, ok := raw["consensus"]; ok {
			e.Agg.XClients = 2
		}
		for key, dst := range map[string]*float64{"train_loss": &e.Agg.TrainLoss, "train_acc": &e.Agg.TrainAcc,
			"val_acc": &e.Agg.ValAcc, "test_acc": &e.Agg.TestAcc, "test_acc_p10": &e.Agg.TestAccP,
			"consensus": &e.Agg.Consensus, "min_weight": &e.Agg.MinWeight} {
			v, ok := raw[key]
			switch {
			case !ok:
			case string(v) == "null":
				*dst = math.NaN()
			default:
				if err := json.Unmarshal(v, dst); err != nil {
					return nil, scenarios.Invalid(path, "%s: %v", key, err)
				}
			}
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// UnmarshalFinite decodes what MarshalFinite encoded: a null where a
// float64 is expected reads as +Inf (MarshalFinite writes overflows as
// null), not as the 0 encoding/json would leave.
func UnmarshalFinite(b []byte, v any) error {
	marked := bytes.ReplaceAll(b, []byte(": null"), append([]byte(": "), overflowMark...))
	if err := json.Unmarshal(marked, v); err != nil {
		return err
	}
	unmarkOverflow(reflect.ValueOf(v))
	return nil
}

// unmarkOverflow turns math.MaxFloat64 back into +Inf, reaching what
// markNonFinite does.
func unmarkOverflow(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			unmarkOverflow(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				unmarkOverflow(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			unmarkOverflow(v.Index(i))
		}
	case reflect.Float64:
		if v.Float() == math.MaxFloat64 && v.CanSet() {
			v.SetFloat(math.Inf(1))
		}
	}
}
