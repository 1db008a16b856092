package memory

import (
	"context"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestPrunePermits: Prune forgets the rates whose next start was free and
// the permits that expired before LimitsBefore, and keeps the others.
func TestPrunePermits(t *testing.T) {
	ctx := context.Background()
	s := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, req := range []scheduler.PermitRequest{
		{Holder: "old", Now: t0, Until: t0.Add(time.Second), Permits: []scheduler.Permit{
			{Scope: "c|host|a", MaxConcurrent: 1}, {Scope: "c|job|j", Interval: time.Second}}},
		{Holder: "new", Now: t0, Until: t0.Add(time.Hour), Permits: []scheduler.Permit{{Scope: "c|host|b", MaxConcurrent: 1}}},
	} {
		if g, err := s.AcquirePermits(ctx, req); err != nil || !g.Granted {
			t.Fatalf("AcquirePermits(%s) = %+v, %v", req.Holder, g, err)
		}
	}
	if _, err := s.Prune(ctx, scheduler.PruneRequest{LimitsBefore: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	var scopes []string
	for name := range s.permits.scopes {
		scopes = append(scopes, name)
	}
	if len(scopes) != 1 || scopes[0] != "c|host|b" {
		t.Errorf("scopes after Prune = %v, want [c|host|b]", scopes)
	}
	if _, ok := s.permits.held["old"]; ok || len(s.permits.held) != 1 {
		t.Errorf("holders after Prune = %v, want only new", s.permits.held)
	}
}
