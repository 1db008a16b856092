package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestPrunePermits: Prune deletes the rows of rates whose next start was
// free and of permits that expired before LimitsBefore, and keeps the
// others.
func TestPrunePermits(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobs.db")
	s := open(t, path)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	take := func(holder, scope string, until time.Time, p scheduler.Permit) {
		t.Helper()
		p.Scope = scope
		g, err := s.AcquirePermits(ctx, scheduler.PermitRequest{Holder: holder, Now: t0, Until: until, Permits: []scheduler.Permit{p}})
		if err != nil || !g.Granted {
			t.Fatalf("AcquirePermits(%s) = %+v, %v", holder, g, err)
		}
	}
	take("old", "c|host|a", t0.Add(time.Second), scheduler.Permit{MaxConcurrent: 1})
	take("new", "c|host|b", t0.Add(time.Hour), scheduler.Permit{MaxConcurrent: 1})
	take("rate", "c|job|j", t0, scheduler.Permit{Interval: time.Second})
	take("later", "c|job|k", t0, scheduler.Permit{Interval: time.Hour})
	if _, err := s.Prune(ctx, scheduler.PruneRequest{LimitsBefore: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []struct{ query, want string }{
		{"SELECT group_concat(holder) FROM limit_permits", "new"},
		{"SELECT group_concat(scope) FROM limit_rates", "c|job|k"},
	} {
		var got sql.NullString
		if err := db.QueryRowContext(ctx, q.query).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got.String != q.want {
			t.Errorf("%s after Prune = %q, want %q", q.query, got.String, q.want)
		}
	}
}
