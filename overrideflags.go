package main

import (
	"strings"

	"github.com/spf13/pflag"

	"hgpsim/run"
	"hgpsim/scenarios"
)

// setFlag is the repeatable --set key.path=value. Each is parsed when given,
// so a malformed one is a usage error naming it; its key and value are
// checked with the whole scenario, like a file.
type setFlag struct{ sets []scenarios.Set }

var _ pflag.Value = (*setFlag)(nil)

func (f *setFlag) String() string {
	var args []string
	for _, s := range f.sets {
		args = append(args, s.Arg)
	}
	return strings.Join(args, " ")
}

func (f *setFlag) Set(arg string) error {
	s, err := scenarios.ParseSet(arg)
	if err != nil {
		return err
	}
	f.sets = append(f.sets, s)
	return nil
}

func (f *setFlag) Type() string { return "key=value" }

// addSetFlag declares --set on a command.
func addSetFlag(fs *pflag.FlagSet, f *setFlag) {
	fs.Var(f, "set", "override a scenario field, e.g. --set network.delta_min=0.3 or --set sgp.rounds=50 (repeatable; any field, validated like the file; list items by index: network.failures.0.offline=0.2)")
}

// gridFlag is the repeatable --grid key.path=v1,v2,… of sweep.
type gridFlag struct{ axes []run.GridAxis }

var _ pflag.Value = (*gridFlag)(nil)

func (f *gridFlag) String() string {
	var args []string
	for _, g := range f.axes {
		args = append(args, g.Key+"="+strings.Join(g.Values, ","))
	}
	return strings.Join(args, " ")
}

func (f *gridFlag) Set(arg string) error {
	g, err := run.ParseGrid(arg)
	if err != nil {
		return err
	}
	f.axes = append(f.axes, g)
	return nil
}

func (f *gridFlag) Type() string { return "key=v1,v2" }

// seedsFlag is sweep's --seeds 1-5 (or 1,4,9).
type seedsFlag struct {
	arg   string
	seeds []uint64
}

var _ pflag.Value = (*seedsFlag)(nil)

func (f *seedsFlag) String() string { return f.arg }

func (f *seedsFlag) Set(arg string) error {
	s, err := run.ParseSeeds(arg)
	if err != nil {
		return err
	}
	f.arg, f.seeds = arg, s
	return nil
}

func (f *seedsFlag) Type() string { return "list" }
