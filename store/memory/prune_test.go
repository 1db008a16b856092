package memory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestPruneIndex applies random writes and prunes and checks each prune
// against a brute-force one over a snapshot of every job and its history,
// and the prune indexes against the jobs after every step.
func TestPruneIndex(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(3, 4))
	s := New()
	for _, c := range []string{"a", "b"} {
		if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: c}); err != nil {
			t.Fatal(err)
		}
	}
	states := []scheduler.JobState{scheduler.JobEnabled, scheduler.JobDisabled, scheduler.JobCompleted, scheduler.JobFaulted}
	pick := func(n int) time.Time { return t0.Add(time.Duration(rng.IntN(n)) * time.Minute) }
	perJob := 5
	deleted := 0
	for step := range 3000 {
		coll := []string{"a", "b"}[rng.IntN(2)]
		name := fmt.Sprintf("j%d", rng.IntN(40))
		switch op := rng.IntN(10); {
		case op < 3: // create or replace
			j, err := s.GetJob(ctx, coll, name)
			if err != nil {
				j = &scheduler.JobRecord{Collection: coll, Name: name, Job: &scheduler.Job{}}
			}
			j.State, j.Updated = states[rng.IntN(len(states))], pick(60)
			j.Schedule.DueAt = t0
			if err := s.PutJob(ctx, j); err != nil {
				t.Fatalf("step %d: PutJob: %v", step, err)
			}
		case op < 7: // claim and record with history
			got, err := s.ClaimDue(ctx, t0.Add(time.Hour), "w", t0.Add(2*time.Hour), 1+rng.IntN(3))
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range got {
				var hist []scheduler.HistoryEntry
				for range rng.IntN(4) {
					end := pick(120)
					if rng.IntN(20) == 0 {
						end = time.Time{}
					}
					hist = append(hist, scheduler.HistoryEntry{Collection: j.Collection, Job: j.Name, Status: scheduler.StatusCompleted,
						EndTime: end, Message: fmt.Sprint(step)})
				}
				j.State, j.Updated = states[rng.IntN(len(states))], pick(60)
				if err := s.Record(ctx, "w", j, hist); err != nil {
					t.Fatalf("step %d: Record: %v", step, err)
				}
			}
		case op == 7:
			if err := s.DeleteJob(ctx, coll, name, ""); err != nil && !errors.Is(err, scheduler.ErrNotFound) {
				t.Fatal(err)
			}
		default: // prune, mostly with the same PerJob
			if rng.IntN(5) == 0 {
				perJob = rng.IntN(8)
			}
			p := scheduler.PruneRequest{PerJob: perJob}
			if rng.IntN(2) == 0 {
				p.HistoryBefore = pick(120)
			}
			if rng.IntN(2) == 0 {
				p.FinalJobsBefore = pick(60)
			}
			want, wantN := brutePrune(s, p)
			n, err := s.Prune(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			deleted += n
			if got := snapshot(s); n != wantN || !equalSnapshots(got, want) {
				t.Fatalf("step %d: Prune(%+v) deleted %d (want %d); jobs and history:\n%v\nwant\n%v", step, p, n, wantN, got, want)
			}
		}
		checkPruneIndexes(t, s, step)
	}
	if deleted < 100 {
		t.Errorf("the prunes deleted %d jobs and entries in all; the test checks little", deleted)
	}
}

// snapshot returns every job's history messages by job.
func snapshot(s *Store) map[string][]string {
	out := make(map[string][]string)
	for _, c := range s.colls {
		for _, e := range c.jobs {
			msgs := []string{}
			for _, h := range e.history() {
				msgs = append(msgs, h.Message+"@"+h.EndTime.Format(time.TimeOnly))
			}
			out[s.read(e).ID()] = msgs
		}
	}
	return out
}

func equalSnapshots(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// brutePrune returns what Prune must leave, and how much it must delete,
// by visiting every job.
func brutePrune(s *Store, p scheduler.PruneRequest) (map[string][]string, int) {
	out := make(map[string][]string)
	n := 0
	for _, c := range s.colls {
		for _, e := range c.jobs {
			if !p.FinalJobsBefore.IsZero() && e.state().Final() && s.read(e).Updated.Before(p.FinalJobsBefore) {
				n++
				continue
			}
			var kept []histEntry
			for _, h := range e.history() {
				if p.HistoryBefore.IsZero() || !h.EndTime.Before(p.HistoryBefore) {
					kept = append(kept, h)
				}
			}
			if p.PerJob > 0 && len(kept) > p.PerJob {
				kept = kept[len(kept)-p.PerJob:]
			}
			n += len(e.history()) - len(kept)
			msgs := []string{}
			for _, h := range kept {
				msgs = append(msgs, h.Message+"@"+h.EndTime.Format(time.TimeOnly))
			}
			out[s.read(e).ID()] = msgs
		}
	}
	return out, n
}

// checkPruneIndexes checks that the indexes hold exactly the final jobs
// and the jobs with history, the final jobs at their last write and the
// others at or before their oldest entry, in heap order, and that s.over
// holds the jobs over the last PerJob.
func checkPruneIndexes(t *testing.T, s *Store, step int) {
	t.Helper()
	finals, aged := 0, 0
	for _, c := range s.colls {
		for _, e := range c.jobs {
			rec := s.read(e)
			if k, in := s.finals.key(e); rec.State.Final() {
				finals++
				if !in || k != timeKey(rec.Updated) {
					t.Fatalf("step %d: final job %s is not in the index at its last write", step, rec.ID())
				}
			} else if in {
				t.Fatalf("step %d: job %s (%s) is in the index of final jobs", step, rec.ID(), rec.State)
			}
			if k, in := s.aged.key(e); len(e.history()) > 0 {
				aged++
				oldest := e.history()[0].EndTime
				for _, h := range e.history() {
					if h.EndTime.Before(oldest) {
						oldest = h.EndTime
					}
				}
				if !in || k > timeKey(oldest) {
					t.Fatalf("step %d: job %s is not in the history index at or before its oldest entry %v", step, rec.ID(), oldest)
				}
			} else if in {
				t.Fatalf("step %d: job %s without history is in the history index", step, rec.ID())
			}
			if _, in := s.over[e]; s.perJob > 0 && len(e.history()) > s.perJob && !in {
				t.Fatalf("step %d: job %s has %d entries, over %d, but is not marked", step, rec.ID(), len(e.history()), s.perJob)
			}
		}
	}
	for what, h := range map[string]*index[*job]{"finals": &s.finals, "aged": &s.aged} {
		want := map[string]int{"finals": finals, "aged": aged}[what]
		if h.len() != want {
			t.Fatalf("step %d: %s index holds %d jobs, want %d", step, what, h.len(), want)
		}
		if err := h.check(); err != nil {
			t.Fatalf("step %d: %s index: %v", step, what, err)
		}
	}
}
