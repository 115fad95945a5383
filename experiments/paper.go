package experiments

import (
	"bytes"
	"embed"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// The papers' reference numbers are data, read when an experiment runs:
// paper/<experiment>.yaml, one file per experiment that prints them.
//
//go:embed paper/*.yaml
var paperFiles embed.FS

// readPaper decodes paper/<name>.yaml into v, strictly: a field v does not
// have is an error, so that a typo in the file cannot drop a number.
func readPaper(name string, v any) error {
	b, err := paperFiles.ReadFile("paper/" + name + ".yaml")
	if err != nil {
		return fmt.Errorf("paper numbers: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("paper numbers (%s.yaml): %w", name, err)
	}
	return nil
}

// wnPaper is the weighted-nodes paper's Table 3 (paper/weighted-nodes.yaml).
type wnPaper struct {
	// Labels is the paper's name of each method.
	Labels map[string]string `yaml:"labels"`
	// Table3 is [target][method][setting − 1] = (mean, std).
	Table3 map[string]map[string][4][2]float64 `yaml:"table3"`
}

// readWNPaper reads Table 3 and checks that it covers every method and
// target the experiment knows.
func readWNPaper() (*wnPaper, error) {
	var p wnPaper
	if err := readPaper("weighted-nodes", &p); err != nil {
		return nil, err
	}
	for _, m := range wnMethods {
		if p.Labels[m] == "" {
			return nil, fmt.Errorf("paper numbers (weighted-nodes.yaml): no label for %s", m)
		}
		for _, t := range []string{"minority", "majority"} {
			if _, ok := p.Table3[t][m]; !ok {
				return nil, fmt.Errorf("paper numbers (weighted-nodes.yaml): no %s row for %s", t, m)
			}
		}
	}
	return &p, nil
}
