package graph

import (
	"fmt"
	"slices"
)

func init() {
	Failures.Register("churn",
		"Nodes go offline and come back at random: each listed node (all when nodes is empty) is a two-state Markov chain, offline a share `offline` of the rounds in periods of mean length mean_offline. An offline node neither sends nor receives and does not run: its state and push-sum mass wait for it, and its links count as down for the others (their push weights keep that share). Alg. 2 counts only the rounds a node is online.",
		func() Failure { return &Churn{Share: 0.1, MeanOffline: 10} })
	Failures.Register("crash",
		"Scheduled crashes: the listed nodes go offline at round `at` and, with recover > at, come back at round `recover` (crash-recover) with the state they had when they crashed (state: last) or restarted from their initial state (state: reinit; the algorithm defines what that is, see docs/failures.md); recover: 0 never comes back (crash-stop). Rounds count from the start of the run, across phases.",
		func() Failure { return &Crash{} })
}

// Churn takes nodes offline at random, each node on its own chain.
type Churn struct {
	NoFailure
	Nodes       []int   `yaml:"nodes" doc:"the nodes that churn (empty: all)"`
	Share       float64 `yaml:"offline" doc:"stationary share of rounds a node is offline, in [0, 1)"`
	MeanOffline float64 `yaml:"mean_offline" doc:"mean length of an offline period in rounds, 1 … 10⁶; needs mean_offline ≥ 1/(1 − offline)"`
}

// Validate implements Failure.
func (c *Churn) Validate(n int) error {
	switch {
	case !(c.Share >= 0 && c.Share < 1):
		return fmt.Errorf("offline must be in [0, 1), got %v", c.Share)
	case !(c.MeanOffline >= 1 && c.MeanOffline <= 1e6):
		return fmt.Errorf("mean_offline must be in [1, 10⁶] rounds, got %v", c.MeanOffline)
	case c.MeanOffline*(1-c.Share) < 1:
		return fmt.Errorf("mean_offline %v is too short for a node offline %v of the time; it needs at least %.3g", c.MeanOffline, c.Share, 1/(1-c.Share))
	}
	return checkNodes("nodes", c.Nodes, n)
}

// Offline implements Failure.
func (c *Churn) Offline(seed uint64, i int, tick uint64) bool {
	if c.Share == 0 || (len(c.Nodes) > 0 && !slices.Contains(c.Nodes, i)) {
		return false
	}
	// An offline period ends with probability 1/MeanOffline per round,
	// which is r·(1 − Offline) in the refresh form of the chain.
	r := 1 / (c.MeanOffline * (1 - c.Share))
	return !markovUp(seed, nodeKey(0x636875726e, i), tick, r, 1-c.Share)
}

// Breaks implements Failure.
func (c *Churn) Breaks() bool { return c.Share > 0 }

// Crash takes nodes offline at a scheduled round, for good or until a
// later round.
type Crash struct {
	NoFailure
	Nodes   []int  `yaml:"nodes" doc:"the nodes that crash"`
	At      uint64 `yaml:"at" doc:"round at which they crash"`
	Recover uint64 `yaml:"recover" doc:"round at which they come back (> at); 0: never (crash-stop)"`
	State   string `yaml:"state" doc:"what a node comes back with: last (the state it crashed with) or reinit (its initial state; for algorithms whose clients can restart)"`
}

// Crash states.
const (
	CrashLast   = "last"
	CrashReinit = "reinit"
)

// Example implements registry.Exampler: a crash needs its nodes.
func (*Crash) Example() string {
	return `clients: 6
network:
  failures: [{kind: crash, nodes: [1, 2], at: 10, recover: 25}]
sgp: {rounds: 40, eval_every: 10}
`
}

// Validate implements Failure.
func (c *Crash) Validate(n int) error {
	if len(c.Nodes) == 0 {
		return fmt.Errorf("nodes: list the nodes that crash")
	}
	if c.Recover != 0 && c.Recover <= c.At {
		return fmt.Errorf("recover (%d) must come after at (%d), or be 0 for a crash-stop", c.Recover, c.At)
	}
	switch c.State {
	case "", CrashLast:
	case CrashReinit:
		if c.Recover == 0 {
			return fmt.Errorf("state: reinit needs recover > at: a node that never comes back restarts nothing")
		}
	default:
		return fmt.Errorf("state: want %s or %s, got %q", CrashLast, CrashReinit, c.State)
	}
	return checkNodes("nodes", c.Nodes, n)
}

// Offline implements Failure.
func (c *Crash) Offline(_ uint64, i int, tick uint64) bool {
	return tick >= c.At && (c.Recover == 0 || tick < c.Recover) && slices.Contains(c.Nodes, i)
}

// Breaks implements Failure.
func (c *Crash) Breaks() bool { return true }

// Reinitializes implements StateLoser: the listed nodes restart from their
// initial state in the round they come back, with state: reinit.
func (c *Crash) Reinitializes(i int, tick uint64) bool {
	return c.State == CrashReinit && tick == c.Recover && slices.Contains(c.Nodes, i)
}

// StateLoser is a Failure after which a node comes back without its state.
type StateLoser interface {
	// Reinitializes reports whether node i comes back online at tick
	// restarted from its initial state.
	Reinitializes(i int, tick uint64) bool
}

// Reinitializes reports whether a failure process brings node i back at
// tick restarted from its initial state.
func (nw *Network) Reinitializes(i int, tick uint64) bool {
	for _, f := range nw.Failures {
		if l, ok := f.(StateLoser); ok && l.Reinitializes(i, tick) {
			return true
		}
	}
	return false
}

// ReinitNodes lists the nodes some failure of nw may restart from their
// initial state, ascending.
func (nw *Network) ReinitNodes() []int {
	var out []int
	for _, f := range nw.Failures {
		if c, ok := f.(*Crash); ok && c.State == CrashReinit {
			out = append(out, c.Nodes...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkNodes checks node indices against n.
func checkNodes(key string, nodes []int, n int) error {
	seen := map[int]bool{}
	for _, v := range nodes {
		if v < 0 || v >= n {
			return fmt.Errorf("%s: node %d is not in [0, %d)", key, v, n)
		}
		if seen[v] {
			return fmt.Errorf("%s: node %d is listed twice", key, v)
		}
		seen[v] = true
	}
	return nil
}
