package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// InvalidError marks a scenario the user must fix (exit code 2).
type InvalidError struct {
	Source string // file name or "scenario"
	Msg    string
}

func (e *InvalidError) Error() string { return e.Source + ": " + e.Msg }

func invalid(src, format string, a ...any) error {
	return &InvalidError{Source: src, Msg: fmt.Sprintf(format, a...)}
}

// IsInvalid reports whether err is (or wraps) an InvalidError.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}

// Load reads, strictly decodes and validates a scenario file.
func Load(path string) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, &InvalidError{Source: path, Msg: err.Error()}
	}
	return Parse(path, b)
}

// Parse strictly decodes a scenario over the defaults and validates it.
// Unknown keys, wrong types and multiple documents are errors with line
// numbers.
func Parse(src string, b []byte) (Scenario, error) {
	sc := Default()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		if errors.Is(err, io.EOF) {
			return Scenario{}, invalid(src, "the file is empty")
		}
		return Scenario{}, invalid(src, "%s", cleanYAMLError(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Scenario{}, invalid(src, "more than one YAML document; a scenario is one document")
	}
	if err := sc.Validate(); err != nil {
		return Scenario{}, invalid(src, "%s", err.Error())
	}
	return sc, nil
}

var (
	reNotFound = regexp.MustCompile(`line (\d+): field (\S+) not found in type scenarios\.(\w+)`)
	reType     = regexp.MustCompile(`into (\S+)$`)
)

var sectionOf = map[string]string{
	"Scenario": "the top level", "NetworkSpec": "network", "EdgeSpec": "network.edges",
	"DataSpec": "data", "ModelSpec": "model", "SGPSpec": "sgp", "ScheduleSpec": "sgp.lr",
	"RuntimeSpec": "runtime", "HGPErrorSpec": "hgp_error", "HypergradientSpec": "hypergradient", "OuterSpec": "outer", "MethodOverride": "method_overrides",
}

// cleanYAMLError turns yaml.v3's multi-line, Go-typed messages into one line
// a user can act on.
func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	lines := strings.Split(msg, "\n")
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if m := reNotFound.FindStringSubmatch(l); m != nil {
			l = fmt.Sprintf("line %s: unknown key %q in %s", m[1], m[2], sectionOf[m[3]])
		} else if m := reType.FindStringSubmatch(l); m != nil {
			t := strings.TrimPrefix(m[1], "scenarios.")
			if s, ok := sectionOf[t]; ok {
				t = "a mapping (" + s + ")"
			}
			l = strings.Replace(l, "into "+m[1], "into "+t, 1)
		}
		out = append(out, l)
	}
	return strings.Join(out, "; ")
}

// Marshal renders the resolved scenario (defaults filled in) as YAML.
func Marshal(sc Scenario) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(sc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
