package run

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"hgpsim/optim"
	"hgpsim/scenarios"
)

// aggregateKeys are the values of an aggregate that are written only when
// measured.
var aggregateKeys = []string{"train_loss", "train_acc", "val_acc", "test_acc", "test_acc_p10", "consensus", "min_weight"}

// summary.json follows the schema of metrics.jsonl: over every golden run,
// the final record has exactly the values (and the numbers) of the last
// aggregate line of metrics.jsonl, and each outer step's record those of
// the last aggregate line of its SGP phase. Nothing unmeasured is 0: the
// consensus distance of a server's one model, which metrics.jsonl writes
// as 0 at every evaluation, is left out.
func TestSummaryWritesOnlyWhatWasMeasured(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scenarios: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			sc.Runtime.Driver = "sequential"
			dir := t.TempDir()
			if _, err := Execute(context.Background(), sc, Options{OutDir: dir}); err != nil {
				t.Fatal(err)
			}
			aggs := aggregateLines(t, filepath.Join(dir, "metrics.jsonl"))
			if len(aggs) == 0 {
				t.Fatal("no aggregate line")
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum struct {
				Final map[string]json.RawMessage   `json:"final"`
				Outer []map[string]json.RawMessage `json:"outer"`
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			a, err := optim.Algorithms.Lookup(sc.Algorithm.Name)
			if err != nil {
				t.Fatal(err)
			}
			oneModel := a.New().Server()
			sameValues(t, "final", sum.Final, aggs[len(aggs)-1], oneModel)
			for _, rec := range sum.Outer {
				var step int
				if err := json.Unmarshal(rec["step"], &step); err != nil {
					t.Fatal(err)
				}
				var last map[string]json.RawMessage
				for _, a := range aggs {
					var s int
					if string(a["phase"]) == `"sgp"` && json.Unmarshal(a["outer"], &s) == nil && s == step {
						last = a
					}
				}
				if last == nil {
					t.Fatalf("outer step %d has no SGP evaluation in metrics.jsonl", step)
				}
				sameValues(t, "outer step "+string(rec["step"]), rec, last, oneModel)
			}
			// Read back and written again, the summary keeps its bytes.
			var back Summary
			if err := UnmarshalFinite(b, &back); err != nil {
				t.Fatal(err)
			}
			again, err := MarshalFinite(&back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(append(again, '\n'), b) {
				t.Errorf("summary.json read back and written again differs:\n%s\n---\n%s", b, again)
			}
		})
	}
}

// aggregateLines returns metrics.jsonl's aggregate lines of evaluations.
func aggregateLines(t *testing.T, path string) []map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]json.RawMessage
	lines := bufio.NewScanner(bytes.NewReader(b))
	lines.Buffer(nil, 1<<28)
	for lines.Scan() {
		var row map[string]json.RawMessage
		if err := json.Unmarshal(lines.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if _, hyper := row["hypergradient_norm"]; hyper || string(row["client"]) != `"all"` {
			continue
		}
		out = append(out, row)
	}
	return out
}

// sameValues checks that got has exactly want's aggregate values, but
// for the consensus distance of a server's one model (oneModel), which
// got leaves out and want holds as 0.
func sameValues(t *testing.T, what string, got, want map[string]json.RawMessage, oneModel bool) {
	t.Helper()
	for _, k := range aggregateKeys {
		g, inGot := got[k]
		w, inWant := want[k]
		if k == "consensus" && oneModel {
			if inGot || (inWant && string(w) != "0") {
				t.Errorf("%s: a server's consensus distance is %s in summary.json, %s in metrics.jsonl; want absent and 0", what, g, w)
			}
			continue
		}
		if inGot != inWant {
			t.Errorf("%s: %s written %v in summary.json, %v in metrics.jsonl", what, k, inGot, inWant)
			continue
		}
		if !inGot {
			continue
		}
		var gv, wv float64
		if json.Unmarshal(g, &gv) != nil || json.Unmarshal(w, &wv) != nil || gv != wv {
			t.Errorf("%s: %s is %s in summary.json, %s in metrics.jsonl", what, k, g, w)
		}
	}
}

// jsonKeys returns the keys encoding/json gives t's fields, the promoted
// fields of embedded structs included.
func jsonKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case key == "-":
		case f.Anonymous && key == "":
			out = append(out, jsonKeys(f.Type)...)
		case f.IsExported():
			out = append(out, key)
		}
	}
	return out
}

// The JSON forms of Summary and OuterRecord list every field of theirs, in
// their order: a field added to Summary must be added to summaryJSON.
func TestSummaryJSONHasEverySummaryField(t *testing.T) {
	for _, c := range []struct{ have, want reflect.Type }{
		{reflect.TypeFor[summaryJSON](), reflect.TypeFor[Summary]()},
		{reflect.TypeFor[outerJSON](), reflect.TypeFor[OuterRecord]()},
	} {
		if have, want := jsonKeys(c.have), jsonKeys(c.want); !slices.Equal(have, want) {
			t.Errorf("%v has the keys %v, %v has %v", c.have, have, c.want, want)
		}
	}
}
