// Package experiments holds the registered experiments (scenarios with an
// `experiment:` section), which study an estimator or an algorithm over
// many seeds and settings instead of training once. Each is one file with
// its registration; it builds its networks, data and clients like a
// training run and executes them on the scenario's driver through
// scenarios.Env.
//
// It may import run, report, scenarios and the packages below them; never
// bench or the command.
package experiments

import (
	"encoding/json"
	"fmt"

	"hgpsim/scenarios"
)

// writeSummary writes an experiment's summary as summary.json, indented,
// with a final newline.
func writeSummary(env scenarios.Env, sum any) error {
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	return env.WriteFile("summary.json", append(b, '\n'))
}
