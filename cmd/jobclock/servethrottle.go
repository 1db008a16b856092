package main

import (
	"errors"
	"flag"
	"time"

	"github.com/jobclock/scheduler/httpapi"
)

// serveThrottle are the request budget flags of serve.
type serveThrottle struct {
	reads, writes int
	window        time.Duration
	off           bool
}

func addThrottleFlags(fs *flag.FlagSet) *serveThrottle {
	t := new(serveThrottle)
	fs.IntVar(&t.reads, "throttle-reads", httpapi.DefaultReadsPerWindow, "read requests (GET) each caller may make per -throttle-window")
	fs.IntVar(&t.writes, "throttle-writes", httpapi.DefaultWritesPerWindow, "write requests (PUT, PATCH, DELETE, POST) each caller may make per -throttle-window")
	fs.DurationVar(&t.window, "throttle-window", httpapi.DefaultThrottleWindow, "the time over which a caller's budgets refill")
	fs.BoolVar(&t.off, "no-throttle", false, "do not limit requests (no 429 responses, no rate limit headers)")
	return t
}

// options returns the handler's Throttle, or a usage error.
func (t *serveThrottle) options() (*httpapi.Throttle, error) {
	switch {
	case t.off:
		return &httpapi.Throttle{Disabled: true}, nil
	case t.reads < 1:
		return nil, errors.New("-throttle-reads must be at least 1 (use -no-throttle to turn throttling off)")
	case t.writes < 1:
		return nil, errors.New("-throttle-writes must be at least 1 (use -no-throttle to turn throttling off)")
	case t.window <= 0:
		return nil, errors.New("-throttle-window must be positive")
	}
	return &httpapi.Throttle{ReadsPerWindow: t.reads, WritesPerWindow: t.writes, Window: t.window}, nil
}
