package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// notifyShutdown catches SIGINT and SIGTERM: the first ends ctx, which
// starts the shutdown; each later one is sent on again (a buffer of one:
// a signal while one waits there is dropped), for the shutdown to cut
// short. stop restores the signals' default handling and ends ctx.
func notifyShutdown() (ctx context.Context, again <-chan os.Signal, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	later := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				if ctx.Err() == nil {
					cancel()
					continue
				}
				select {
				case later <- sig:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, later, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}
