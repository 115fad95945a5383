// Package registry holds the plug-in tables of hgpsim: one Registry per axis
// (network topologies, link processes, models, heads, data sources,
// hyper-gradient estimators, client behaviours, methods, experiments).
//
// A plug-in is a name, a one-paragraph description and a constructor that
// returns a fresh value of its parameter struct with every default filled
// in. The struct carries `yaml` tags (the keys a scenario file may set for
// this kind) and `doc` tags (one line per key, including the allowed range,
// for `hgpsim list` and the scenario reference); its methods validate the
// parameters and build what the kind stands for. Package scenarios decodes
// a section of a scenario file strictly into that struct, so a key that
// means nothing for the chosen kind is an error with its line number.
//
// Registries are filled by init functions in the package that owns the
// plug-ins (the pattern of database/sql drivers and image formats) and are
// read-only afterwards: Register panics once the program has started using
// the registry, and on a duplicate name. Adding a plug-in is therefore one
// new file with its registration and nothing else.
//
// It imports the standard library only: every registry of plug-ins (graph
// topologies, models, algorithms, faults, experiments) is built on it.
package registry
