package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestLoad runs a small load (20 clients, 600 jobs at 200/s) against a
// real jobclock serve on SQLite, so that the program keeps working; the
// full 10,000 jobs at 1,000/s is `go run ./load`.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs jobclock serve")
	}
	var log strings.Builder
	rep, err := run(context.Background(), config{Clients: 20, Jobs: 600, Rate: 200, SetupConns: 8, Grace: 20 * time.Second, Log: &log})
	if err != nil {
		t.Fatalf("%v\nserve's log:\n%s", err, log.String())
	}
	var out strings.Builder
	rep.print(&out)
	t.Log("\n" + out.String())
	if rep.Lost != 0 || rep.Duplicated != 0 || rep.Received != 600 {
		t.Errorf("received %d of 600 jobs, %d lost, %d duplicated with another tag", rep.Received, rep.Lost, rep.Duplicated)
	}
	if n := rep.serverErrors(); n != 0 {
		t.Errorf("%d answers were 5xx", n)
	}
	for _, op := range []string{"put", "get", "list", "history"} {
		s := rep.Ops[op]
		if s == nil || len(s.lat) == 0 {
			t.Errorf("no %s request was measured", op)
			continue
		}
		if s.other != 0 || s.throttled != 0 {
			t.Errorf("%s: %d failed, %d throttled; first: %v", op, s.other, s.throttled, s.firstErr)
		}
	}
}
