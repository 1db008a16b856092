package memory

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/claimtoken"
)

// TestClaimTokens covers RecordBatchTokens finding claimed jobs by the
// tokens ClaimDueTokens returned, and treating a token that does not name
// its record's claim (another job's, another store's, a stale claim's, a
// deleted job's) as none.
func TestClaimTokens(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	newStore := func(t *testing.T, n int) *Store {
		var jobs []*scheduler.JobRecord
		for i := range n {
			jobs = append(jobs, &scheduler.JobRecord{Collection: "c", Name: fmt.Sprint("j", i), Job: &scheduler.Job{},
				State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: now}})
		}
		return storeWith(t, jobs...)
	}
	claim := func(t *testing.T, s *Store, owner string, at time.Time, n int) ([]*scheduler.JobRecord, []claimtoken.Token) {
		t.Helper()
		got, toks, err := (tokenMethods{s}).ClaimDueTokens(ctx, at, owner, at.Add(time.Minute), n, nil)
		if err != nil || len(got) != n || len(toks) != n {
			t.Fatalf("ClaimDueTokens = %d jobs, %d tokens, %v; want %d of each", len(got), len(toks), err, n)
		}
		return got, toks
	}
	// done marks r as run, with one history entry naming it.
	done := func(r *scheduler.JobRecord) scheduler.RecordRequest {
		r.Schedule.DueAt = time.Time{}
		return scheduler.RecordRequest{Job: r, History: []scheduler.HistoryEntry{{Collection: r.Collection, Job: r.Name,
			ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, Message: r.Name}}}
	}
	// ranOnce checks that job name has exactly its own history entry and
	// is no longer due or leased.
	ranOnce := func(t *testing.T, s *Store, name string) {
		t.Helper()
		h, err := s.ListHistory(ctx, "c", name, scheduler.HistoryFilter{})
		if err != nil || len(h) != 1 || h[0].Message != name {
			t.Errorf("history of %s = %+v, %v; want its one entry", name, h, err)
		}
		r, err := s.GetJob(ctx, "c", name)
		if err != nil || !r.Schedule.DueAt.IsZero() || r.LeaseOwner != "" {
			t.Errorf("GetJob(%s) = %+v, %v; want it recorded, lease released", name, r, err)
		}
	}

	t.Run("found by their tokens", func(t *testing.T) {
		s := newStore(t, 3)
		got, toks := claim(t, s, "me", now, 3)
		if len(s.claimed) != 0 {
			t.Errorf("%d claims in the claimed map, want 0: tokens find them", len(s.claimed))
		}
		spare := len(s.spare)
		reqs := []scheduler.RecordRequest{done(got[0]), done(got[1]), done(got[2])}
		earlier := errors.New("an earlier error")
		errs := (tokenMethods{s}).RecordBatchTokens(ctx, "me", reqs, toks, []error{earlier})
		if len(errs) != 4 || errs[0] != earlier {
			t.Fatalf("RecordBatchTokens = %v, want 4 errors after the one passed in", errs)
		}
		for i, err := range errs[1:] {
			if err != nil {
				t.Errorf("RecordBatchTokens[%d]: %v", i, err)
			}
		}
		// A record found by its claim gives its box back; one found by
		// name cannot.
		if n := len(s.spare) - spare; n != 3 {
			t.Errorf("%d claimed records taken back, want 3", n)
		}
		for _, r := range []string{"j0", "j1", "j2"} {
			ranOnce(t, s, r)
		}
	})
	t.Run("wrong, missing and foreign tokens count as none", func(t *testing.T) {
		s := newStore(t, 4)
		other := newStore(t, 4)
		got, toks := claim(t, s, "me", now, 4)
		_, otherToks := claim(t, other, "me", now, 4)
		reqs := []scheduler.RecordRequest{done(got[0]), done(got[1]), done(got[2]), done(got[3])}
		// j0 and j1 swapped, j2 another store's, j3 none at all.
		bad := []claimtoken.Token{toks[1], toks[0], otherToks[2]}
		for i, err := range (tokenMethods{s}).RecordBatchTokens(ctx, "me", reqs, bad, nil) {
			if err != nil {
				t.Errorf("RecordBatchTokens[%d]: %v", i, err)
			}
		}
		for _, r := range []string{"j0", "j1", "j2", "j3"} {
			ranOnce(t, s, r)
		}
		// The other store's claims are untouched.
		for _, name := range []string{"j0", "j1", "j2", "j3"} {
			r, err := other.GetJob(ctx, "c", name)
			if err != nil || r.LeaseOwner != "me" || r.Schedule.DueAt.IsZero() {
				t.Errorf("other store's %s = %+v, %v; want still claimed", name, r, err)
			}
			if h, _ := other.ListHistory(ctx, "c", name, scheduler.HistoryFilter{}); len(h) != 0 {
				t.Errorf("other store's %s has history %+v", name, h)
			}
		}
	})
	t.Run("another store's claim with its token", func(t *testing.T) {
		s, other := newStore(t, 1), newStore(t, 1)
		claim(t, s, "me", now, 1)
		got, toks := claim(t, other, "me", now, 1)
		// Recorded in s by name, as any record that is no claim of s.
		if errs := (tokenMethods{s}).RecordBatchTokens(ctx, "me", []scheduler.RecordRequest{done(got[0])}, toks, nil); errs[0] != nil {
			t.Errorf("RecordBatchTokens: %v", errs[0])
		}
		ranOnce(t, s, "j0")
		r, err := other.GetJob(ctx, "c", "j0")
		if err != nil || r.LeaseOwner != "me" {
			t.Errorf("other store's job = %+v, %v; want still claimed", r, err)
		}
		if h, _ := other.ListHistory(ctx, "c", "j0", scheduler.HistoryFilter{}); len(h) != 0 {
			t.Errorf("other store's job has history %+v", h)
		}
	})
	// A stale claim: the lease ran out and the job was claimed again, by
	// another instance (the stale record has lost the lease) or by the
	// same one (the stale record's version is old). Either way the stale
	// token must not drop the current claim, which its own token finds.
	for _, c := range []struct {
		next string
		want error
	}{{"you", scheduler.ErrLeaseLost}, {"me", scheduler.ErrConflict}} {
		t.Run("stale claim, claimed again by "+c.next, func(t *testing.T) {
			s := newStore(t, 1)
			old, oldToks := claim(t, s, "me", now, 1)
			cur, curToks := claim(t, s, c.next, now.Add(2*time.Minute), 1)
			if errs := (tokenMethods{s}).RecordBatchTokens(ctx, "me", []scheduler.RecordRequest{done(old[0])}, oldToks, nil); !errors.Is(errs[0], c.want) {
				t.Errorf("record of the stale claim: %v, want %v", errs[0], c.want)
			}
			spare := len(s.spare)
			if errs := (tokenMethods{s}).RecordBatchTokens(ctx, c.next, []scheduler.RecordRequest{done(cur[0])}, curToks, nil); errs[0] != nil {
				t.Errorf("record of the current claim: %v", errs[0])
			}
			if len(s.spare) != spare+1 {
				t.Errorf("the current claim was not found by its token")
			}
			ranOnce(t, s, "j0")
		})
	}
	t.Run("job deleted", func(t *testing.T) {
		s := newStore(t, 1)
		got, toks := claim(t, s, "me", now, 1)
		if err := s.DeleteJob(ctx, "c", "j0"); err != nil {
			t.Fatal(err)
		}
		if errs := (tokenMethods{s}).RecordBatchTokens(ctx, "me", []scheduler.RecordRequest{done(got[0])}, toks, nil); !errors.Is(errs[0], scheduler.ErrNotFound) {
			t.Errorf("record of a deleted job's claim: %v, want ErrNotFound", errs[0])
		}
	})
	t.Run("claims with and without tokens side by side", func(t *testing.T) {
		s := newStore(t, 2)
		plain := claimOne(t, s, now)
		got, toks := claim(t, s, "me", now, 1)
		if len(s.claimed) != 1 {
			t.Errorf("%d claims in the claimed map, want 1", len(s.claimed))
		}
		spare := len(s.spare)
		errs := (tokenMethods{s}).RecordBatchTokens(ctx, "me", []scheduler.RecordRequest{done(plain), done(got[0])}, []claimtoken.Token{{}, toks[0]}, nil)
		if errs[0] != nil || errs[1] != nil {
			t.Errorf("RecordBatchTokens = %v", errs)
		}
		if len(s.claimed) != 0 || len(s.spare) != spare+2 {
			t.Errorf("after recording: %d claims in the map, %d records taken back; want 0 and 2", len(s.claimed), len(s.spare)-spare)
		}
		ranOnce(t, s, "j0")
		ranOnce(t, s, "j1")
	})
}
