package main

// The tables of docs/scenarios.md and the other generated regions of the
// documentation come from the registries (internal/docgen).
//go:generate go run ./tools/docgen
