package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"hgpsim/actors"
	"hgpsim/graph"
	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

func newWorkerCmd(stdout, stderr io.Writer) *cobra.Command {
	var listen, advertise, root string
	var insecure bool
	var sf securityFlags
	cmd := &cobra.Command{
		Use:   "worker --listen HOST:PORT",
		Short: "Host client actors for runs started elsewhere (proto.actor remote)",
		Long: `Serve as a worker of distributed runs: listen on HOST:PORT (port 0 picks
a free one) and host the clients a supervisor assigns, for one run at a
time. A run names its workers with --workers on hgpsim run or
runtime.workers in the scenario. The worker builds its clients itself from
the scenario the supervisor sends, so it needs the same hgpsim version and
the same data files at the same paths as the supervisor.

The first line on stdout is "hgpsim worker listening on ADDR". A run may
name the worker by any address that reaches it (ADDR, a host name, …).
When listening on an unspecified host (0.0.0.0), --advertise sets the
name printed. The worker logs on stderr the runs it hosts and releases,
and connections it refuses, and runs until SIGINT or SIGTERM.

A worker requires a shared secret (--secret-file, or the environment
variable ` + secretEnv + `) from every supervisor, which presents the same
one; it refuses to start without one unless --insecure is given. TLS is
on with --tls-cert and --tls-key (and the same flags on hgpsim run).
Every file a scenario makes it read must lie under --data-root.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdWorker(listen, advertise, root, insecure, sf, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on, host:port (port 0: any free port)")
	cmd.Flags().StringVar(&advertise, "advertise", "", "the worker's name, host:port, printed for supervisors to use (default: the listening address)")
	cmd.Flags().StringVar(&root, "data-root", "", "folder holding every data file runs may read; a scenario naming a path outside it is refused")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "accept supervisors without a secret and read files anywhere (a trusted network only)")
	addSecurityFlags(cmd.Flags(), &sf)
	return cmd
}

// buildFromScenario returns how a worker builds a run's clients: exactly
// as run.Execute would from the same resolved scenario, after checking
// that the files it names lie under root (nil: anywhere).
func buildFromScenario(root *dataRoot) actors.BuildFunc {
	return func(b []byte, clients []int64) (*graph.Network, optim.ClientFactory, error) {
		sc, err := scenarios.Decode("scenario from the supervisor", b)
		if err != nil {
			return nil, nil, err
		}
		if root != nil {
			if err := root.check(sc); err != nil {
				return nil, nil, fmt.Errorf("refused: %w", err)
			}
		}
		boundWorkerHeap(scenarios.Estimate(sc))
		return buildRun(sc, clients)
	}
}

// buildRun builds the data and clients of the block that holds clients
// (contiguous, as the supervisor assigns them; any others in between
// would be built too).
func buildRun(sc scenarios.Scenario, clients []int64) (*graph.Network, optim.ClientFactory, error) {
	var opts []run.BuildOption
	if len(clients) > 0 {
		opts = append(opts, run.Hosting(int(slices.Min(clients)), int(slices.Max(clients))+1))
	}
	r, err := run.Build(sc, opts...)
	if err != nil {
		return nil, nil, err
	}
	return r.Net, r.Factory(), nil
}

func cmdWorker(listen, advertise, rootDir string, insecure bool, sf securityFlags, stdout, stderr io.Writer) error {
	if listen == "" {
		return usageError{"worker: --listen HOST:PORT is required"}
	}
	if _, _, err := actors.SplitAddress(listen); err != nil {
		return usageError{"worker: --listen: " + err.Error()}
	}
	if advertise != "" {
		if _, _, err := actors.SplitAddress(advertise); err != nil {
			return usageError{"worker: --advertise: " + err.Error()}
		}
	}
	sec, err := sf.security()
	if err != nil {
		return err
	}
	if len(sec.Secret) == 0 && !insecure {
		return usageError{"worker: no shared secret: give --secret-file FILE or set " + secretEnv + " (the supervisor presents the same), or --insecure on a trusted network"}
	}
	var root *dataRoot
	switch {
	case rootDir != "":
		if root, err = newDataRoot(rootDir); err != nil {
			return usageError{"worker: --data-root: " + err.Error()}
		}
	case !insecure:
		return usageError{"worker: --data-root DIR is required: the folder of the data files runs may read (or --insecure)"}
	}
	events := func(msg string) {
		fmt.Fprintf(stderr, "%s hgpsim worker: %s\n", time.Now().Format("15:04:05"), msg)
	}
	if len(sec.Secret) == 0 {
		events("warning: --insecure and no secret: any process that reaches this port can start runs here")
	}
	if root == nil {
		events("warning: no --data-root: runs may read any file this user can")
	}
	w, err := actors.StartWorker(listen, buildFromScenario(root), actors.WorkerOptions{Advertise: advertise, Events: events, Security: sec})
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer w.Close()
	fmt.Fprintf(stdout, "hgpsim worker listening on %s\n", w.Address())
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	ctx, sigs := notifyStop(context.Background(), func(os.Signal) {})
	defer sigs.stop()
	<-ctx.Done()
	fmt.Fprintln(stderr, "hgpsim worker: stopping")
	return nil
}
