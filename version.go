package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"hgpsim/internal/cpuid"
	"hgpsim/internal/gemm"
)

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the module version and VCS revision, the CPU and the kernel path chosen for it",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Sprintf("version takes no arguments, got %q", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			info, ok := debug.ReadBuildInfo()
			fmt.Fprintln(stdout, versionLine(info, ok))
			fmt.Fprintf(stdout, "cpu: %s\nkernels: %s\n", cpuid.Get(), gemm.Path())
			return nil
		},
	}
}

// versionLine renders the build information of the binary. The go command
// stamps the VCS fields only when it builds inside a checkout with VCS
// stamping on (not with -buildvcs=false, not for test binaries), and a
// binary built outside module mode has no build information at all, so
// every field has a fallback.
func versionLine(info *debug.BuildInfo, ok bool) string {
	version, revision, modified := "(devel)", "unknown", "unknown"
	goVersion := runtime.Version()
	if ok && info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	return fmt.Sprintf("hgpsim %s, revision %s, modified %s, %s %s/%s",
		version, revision, modified, goVersion, runtime.GOOS, runtime.GOARCH)
}
