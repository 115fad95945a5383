package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignals are the signals that stop a run cleanly: the drivers finish
// the round they are in, Execute returns an error wrapping
// context.Canceled and summary.json is not written.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM}

// signalStop cancels a context on the first of stopSignals and remembers
// which one it was. signal.NotifyContext would do the cancelling, but it
// does not tell which signal arrived, and the exit code depends on it.
type signalStop struct {
	ch     chan os.Signal
	done   chan struct{}
	cancel context.CancelFunc
	mu     sync.Mutex
	sig    os.Signal
}

// notifyStop returns a context that the first SIGINT or SIGTERM cancels.
// onSignal, if not nil, is called with that signal. The handlers are
// removed right after the first signal, so a second one gets the default
// action and ends the process at once: the way out when stopping takes
// too long. stop must be called when the work is over.
func notifyStop(parent context.Context, onSignal func(os.Signal)) (context.Context, *signalStop) {
	ctx, cancel := context.WithCancel(parent)
	s := &signalStop{ch: make(chan os.Signal, 1), done: make(chan struct{}), cancel: cancel}
	signal.Notify(s.ch, stopSignals...)
	go func() {
		select {
		case sig := <-s.ch:
			signal.Stop(s.ch)
			s.mu.Lock()
			s.sig = sig
			s.mu.Unlock()
			if onSignal != nil {
				onSignal(sig)
			}
			cancel()
		case <-s.done:
		}
	}()
	return ctx, s
}

// stop removes the signal handlers and releases the context.
func (s *signalStop) stop() {
	signal.Stop(s.ch)
	close(s.done)
	s.cancel()
}

// caught is the signal that cancelled the context, or nil.
func (s *signalStop) caught() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig
}

// wrap turns err into an interrupted error if a signal was caught.
func (s *signalStop) wrap(err error) error {
	if err == nil {
		return nil
	}
	sig, ok := s.caught().(syscall.Signal)
	if !ok {
		return err
	}
	return interrupted{sig: sig, err: err}
}

// interrupted is work stopped by a signal. Its exit code is 128 plus the
// signal number (130 for SIGINT, 143 for SIGTERM), what a shell reports
// for a process the signal killed, so scripts see the same code whether
// or not hgpsim caught the signal.
type interrupted struct {
	sig syscall.Signal
	err error
}

func (e interrupted) Error() string {
	return fmt.Sprintf("interrupted by %s: %v", signalName(e.sig), e.err)
}

func (e interrupted) Unwrap() error { return e.err }

func (e interrupted) exitCode() int { return 128 + int(e.sig) }

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
