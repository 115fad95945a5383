package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"hgpsim/internal/registry"
)

func newListCmd(stdout io.Writer) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "list [AXIS]",
		Short: "List the registered plug-ins with their parameters and defaults",
		Long: `List what can be chosen in a scenario file, each kind with its
description and its parameters (key, type, default, allowed range). AXIS
limits the list to one axis: ` + strings.Join(axisNames(), ", ") + `.
--markdown prints the tables of docs/scenarios.md.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			axes := registry.Axes()
			if len(args) == 1 {
				var names []string
				var found []registry.Axis
				for _, a := range axes {
					names = append(names, a.Name())
					if a.Name() == args[0] {
						found = append(found, a)
					}
				}
				if len(found) == 0 {
					return usageError{fmt.Sprintf("unknown axis %q (axes: %s)", args[0], strings.Join(names, ", "))}
				}
				axes = found
			}
			for k, a := range axes {
				if k > 0 {
					fmt.Fprintln(stdout)
				}
				if markdown {
					fmt.Fprint(stdout, registry.Markdown(a))
				} else {
					fmt.Fprint(stdout, registry.Text(a))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the Markdown tables of docs/scenarios.md")
	return cmd
}

// axisNames lists the registered axes, read when the command is made (after
// every plug-in's init).
func axisNames() []string {
	var names []string
	for _, a := range registry.Axes() {
		names = append(names, a.Name())
	}
	return names
}
