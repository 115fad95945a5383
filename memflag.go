package main

import (
	"github.com/spf13/pflag"

	"hgpsim/scenarios"
)

// memoryFlag is --max-memory: the limit on a run's estimated peak memory.
// Its zero value means the machine's memory.
type memoryFlag struct{ bytes int64 }

var _ pflag.Value = (*memoryFlag)(nil)

func (m *memoryFlag) String() string {
	switch {
	case m.bytes == 0:
		return "machine"
	case m.bytes < 0:
		return "none"
	}
	return scenarios.Bytes(m.bytes)
}

func (m *memoryFlag) Set(s string) error {
	switch s {
	case "machine":
		m.bytes = 0
		return nil
	case "none":
		m.bytes = -1
		return nil
	}
	b, err := scenarios.ParseBytes(s)
	if err != nil {
		return err
	}
	m.bytes = b
	return nil
}

func (m *memoryFlag) Type() string { return "size" }

// addMemoryFlag declares --max-memory on a command.
func addMemoryFlag(fs *pflag.FlagSet, m *memoryFlag) {
	fs.Var(m, "max-memory", `refuse scenarios whose estimated peak memory exceeds this size (e.g. 8GiB, 512MB); "machine" is this machine's memory, "none" no limit`)
}
