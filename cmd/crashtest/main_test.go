package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var crash = flag.Bool("crash", false, "run the crash test (about 2.5 minutes; needs JOBCLOCK_POSTGRES_DSN)")

// TestMain lets the test binary act as a worker process of the crash test.
func TestMain(m *testing.M) {
	if id := os.Getenv(envWorker); id != "" {
		if err := worker(id, os.Getenv(envDSN), os.Getenv(envSchema)); err != nil {
			os.Stderr.WriteString("crashtest worker: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestCrash runs the crash test: go test ./cmd/crashtest -crash -v -timeout 10m
// (or JOBCLOCK_CRASHTEST=1).
func TestCrash(t *testing.T) {
	if !*crash && os.Getenv("JOBCLOCK_CRASHTEST") != "1" {
		t.Skip("crash test not requested: run with -crash or JOBCLOCK_CRASHTEST=1")
	}
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("JOBCLOCK_POSTGRES_DSN is not set; start PostgreSQL with scripts/start-postgres.sh")
		}
		t.Skip("JOBCLOCK_POSTGRES_DSN is not set; run eval \"$(bash scripts/start-postgres.sh DIR)\" first")
	}
	err := Run(context.Background(), Config{DSN: dsn, Jobs: 600, Duration: 140 * time.Second, KillAfter: 65 * time.Second,
		Workers: 3, Lease: 5 * time.Second, Delay: 500 * time.Millisecond, Exe: os.Args[0], Out: tWriter{t}, StrictTags: true,
		Log: filepath.Join(t.TempDir(), "receiver.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConfigErrors checks that Run refuses a configuration it cannot test.
func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{DSN: "", Jobs: 10, Workers: 3, Duration: time.Minute, KillAfter: time.Second},
		{DSN: "x", Jobs: 0, Workers: 3, Duration: time.Minute, KillAfter: time.Second},
		{DSN: "x", Jobs: 10, Workers: 1, Duration: time.Minute, KillAfter: time.Second},
		{DSN: "x", Jobs: 10, Workers: 3, Duration: time.Minute, KillAfter: time.Hour},
	} {
		if err := Run(context.Background(), c); err == nil {
			t.Errorf("Run(%+v) succeeded, want a configuration error", c)
		}
	}
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
