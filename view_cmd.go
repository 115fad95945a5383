package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"hgpsim/internal/fsutil"
	"hgpsim/view"
)

const viewLong = `Serve a read-only page of the run or sweep in PATH, or write it to one
file with --html.

A run's page draws the network round by round: the clients (on a circle
in client order, a partition's groups kept together), every expected
directed link drawn up or down in the chosen round, links cut by a
partition, offline clients (crash, churn) and delayed messages marked,
a slider and play/pause over the rounds with the phase and outer step,
and the clients coloured by a quantity metrics.jsonl records per client
(push-sum weight, accuracy, loss). The links are the run's recording
(links.csv.gz, from --record-links) or, without one, realized again from
the scenario and its seed, which gives exactly the links the run saw.
Below, a curve of every metric of metrics.jsonl against the round,
aggregated or per client, with non-finite values marked. A run still
going is followed: the page reads what it appends, without reloading.

A sweep's page shows its progress (runs done / total, time left), its
study table and plots, and links to each run's page.

The page needs no network: its script and style are in the binary. The
server listens on 127.0.0.1 on a free port (printed) unless --listen says
otherwise; an address other than loopback needs --token, which every
request must then carry (the printed address has it). --html FILE writes
the same page with the data inlined, to open without a server; a trace
longer than 2·10⁸ link states in all is cut there (said on stderr).`

// htmlMaxStates bounds the link states (links × rounds) --html inlines.
const htmlMaxStates = 200_000_000

type viewFlags struct {
	listen string
	token  string
	html   string
}

func newViewCmd(stdout, stderr io.Writer) *cobra.Command {
	var f viewFlags
	cmd := &cobra.Command{
		Use:   "view PATH",
		Short: "Serve a run's or a sweep's page: the network round by round, curves, progress",
		Long:  viewLong,
		Example: `  hgpsim view runs/partition
  hgpsim view runs/sweep-20260101-120000 --listen 127.0.0.1:8080
  hgpsim view runs/partition --html partition.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Sprintf("view needs exactly one run or sweep folder PATH, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := notifyStop(context.Background(), nil)
			defer stop.stop()
			return cmdView(ctx, args[0], f, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:0", "address to serve on (port 0: a free one)")
	cmd.Flags().StringVar(&f.token, "token", "", "secret every request must carry; needed to listen on an address other than loopback")
	cmd.Flags().StringVar(&f.html, "html", "", "write the page with its data to FILE instead of serving it")
	return cmd
}

// cmdView serves PATH until ctx ends, or writes its page with --html.
func cmdView(ctx context.Context, dir string, f viewFlags, stdout, stderr io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usageError{fmt.Sprintf("%s is not a folder", dir)}
	}
	if _, err := os.Stat(dir + "/scenario.yaml"); err != nil {
		if _, err := os.Stat(dir + "/sweep.json"); err != nil {
			return usageError{fmt.Sprintf("%s is neither a run folder (scenario.yaml) nor a sweep folder (sweep.json)", dir)}
		}
	}
	srv, err := view.New(dir, f.token)
	if err != nil {
		return usageError{err.Error()}
	}
	defer srv.Close()
	if f.html != "" {
		var b bytesWriter
		note, err := srv.WriteHTML(&b, htmlMaxStates)
		if err != nil {
			return err
		}
		if err := fsutil.WriteAtomic(f.html, b); err != nil {
			return err
		}
		if note != "" {
			fmt.Fprintln(stderr, "hgpsim view:", note)
		}
		fmt.Fprintln(stdout, f.html)
		return nil
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usageError{fmt.Sprintf("--listen %q: %v", f.listen, err)}
	}
	if !loopback(host) && f.token == "" {
		return usageError{fmt.Sprintf("--listen %s: not a loopback address; give --token to serve beyond this machine", f.listen)}
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return usageError{fmt.Sprintf("--listen: %v", err)}
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	addr := "http://" + ln.Addr().String() + "/"
	if f.token != "" {
		addr += "?token=" + url.QueryEscape(f.token)
	}
	fmt.Fprintln(stdout, addr)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			return err
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// loopback reports whether host names this machine only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bytesWriter collects the page for an atomic write.
type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}
