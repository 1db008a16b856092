package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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

// TestCrash runs the crash test at the default settings of
// scheduler.Config: three worker processes, one killed with SIGKILL while
// it has requests in flight; its work must be taken over within 15s, with
// no occurrence lost and none run twice but those in flight (with the same
// execution tag). It takes about 2.5 minutes (-short skips it):
//
//	go test ./cmd/crashtest -run TestCrash -v
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash test takes minutes")
	}
	dsn := os.Getenv(envDSN)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("JOBCLOCK_POSTGRES_DSN is not set; start PostgreSQL with scripts/start-postgres.sh")
		}
		t.Skip("JOBCLOCK_POSTGRES_DSN is not set; run eval \"$(bash scripts/start-postgres.sh DIR)\" first")
	}
	// Lease 0: the workers run at scheduler.DefaultLeaseDuration.
	err := Run(context.Background(), Config{DSN: dsn, Jobs: 600, Duration: 125 * time.Second, KillAfter: 55 * time.Second,
		Workers: 3, Delay: 2 * time.Second, LongDelay: 25 * time.Second, MaxLate: 15 * time.Second,
		Exe: os.Args[0], Out: tWriter{t}, StrictTags: true, Log: filepath.Join(t.TempDir(), "receiver.jsonl")})
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
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
