package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"hgpsim/actors"
	"hgpsim/graph"
	"hgpsim/optim"
	"hgpsim/run"
	"hgpsim/scenarios"
)

func newWorkerCmd(stdout, stderr io.Writer) *cobra.Command {
	var listen, advertise string
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
and runs until SIGINT or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdWorker(listen, advertise, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on, host:port (port 0: any free port)")
	cmd.Flags().StringVar(&advertise, "advertise", "", "the worker's name, host:port, printed for supervisors to use (default: the listening address)")
	return cmd
}

// buildFromScenario is how a worker builds a run's clients: exactly as
// run.Execute would from the same resolved scenario.
func buildFromScenario(b []byte) (*graph.Network, optim.ClientFactory, error) {
	sc, err := scenarios.Decode("scenario from the supervisor", b)
	if err != nil {
		return nil, nil, err
	}
	r, err := run.Build(sc)
	if err != nil {
		return nil, nil, err
	}
	return r.Net, r.Factory(), nil
}

func cmdWorker(listen, advertise string, stdout, stderr io.Writer) error {
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
	events := func(msg string) {
		fmt.Fprintf(stderr, "%s hgpsim worker: %s\n", time.Now().Format("15:04:05"), msg)
	}
	w, err := actors.StartWorker(listen, buildFromScenario, actors.WorkerOptions{Advertise: advertise, Events: events})
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
