// Command load drives a real jobclock serve process with concurrent API
// clients while one-time jobs fire at a steady rate against a loopback
// HTTP receiver, and reports the API's latency and errors, lost and
// repeated occurrences, and start lateness.
//
//	cd bench && go run ./load                       # 100 clients, 10,000 jobs at 1,000/s, SQLite
//	cd bench && go run ./load -postgres "$DSN"      # the same on PostgreSQL
//
// Each API client has its own bearer token, so serve's default request
// budgets (per caller) apply as they would to separate callers. A client
// loops over: put a job due in a year in its own collection (25 %), get a
// job that fires (35 %), list a page of such jobs (20 %), list a job's
// history (20 %). A client answered 429 waits the Retry-After it was given
// before its next request, as a client of ARM does. The jobs that fire
// are put before the first is due, by -setup writers (which put a job
// again after the Retry-After of a 429); each posts once to the receiver,
// without retries.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	cfg := config{}
	flag.IntVar(&cfg.Clients, "clients", 100, "concurrent API `clients`")
	flag.IntVar(&cfg.Jobs, "jobs", 10000, "one-time `jobs` that fire")
	flag.IntVar(&cfg.Rate, "rate", 1000, "jobs due per `second`")
	flag.IntVar(&cfg.SetupConns, "setup", 32, "concurrent `writers` that put the jobs before they fire")
	flag.DurationVar(&cfg.Grace, "grace", 30*time.Second, "how long to wait for deliveries after the last due time")
	flag.StringVar(&cfg.Binary, "jobclock", "", "the jobclock `command` to run (default: build ./cmd/jobclock)")
	flag.StringVar(&cfg.Postgres, "postgres", "", "PostgreSQL `DSN` (default: a SQLite file in a temporary directory)")
	serveArgs := flag.String("serve-args", "", "more `flags` for jobclock serve, separated by spaces (such as \"-api-reads 4\")")
	verbose := flag.Bool("v", false, "copy serve's log to stderr")
	flag.Parse()
	cfg.ServeArgs = strings.Fields(*serveArgs)
	if cfg.Clients < 1 || cfg.Jobs < 1 || cfg.Rate < 1 || cfg.SetupConns < 1 {
		fmt.Fprintln(os.Stderr, "load: -clients, -jobs, -rate and -setup must be at least 1")
		os.Exit(2)
	}
	if *verbose {
		cfg.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	rep.print(os.Stdout)
	if rep.Lost > 0 || rep.Duplicated > 0 || rep.serverErrors() > 0 {
		os.Exit(1)
	}
}
