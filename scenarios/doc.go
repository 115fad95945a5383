// Package scenarios is the schema of hgpsim's scenario files: the Scenario
// type with its defaults, strict decoding (each section's kind picks a
// registered plug-in whose parameters are decoded from the same mapping, so
// a key that means nothing for the chosen kind is an error with its line),
// validation with a bound on every size, the method presets of the PDBO
// paper, the resource estimate, and Check, which is what `hgpsim validate`
// does without reading data files. The example scenarios live beside it
// (quickstart.yaml, paper/). It also defines the Experiments registry and
// the Env an experiment runs in; package run implements it.
//
// It may import the registries below it (optim and its families, linked
// through optim/families; graph; models) and internal packages; never run,
// actors, wire, report or experiments.
package scenarios
