package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
)

// TestRecordsRaceReplaces races the outcomes of claimed jobs, recorded by
// RecordBatch (most with KeepDefinition), against replaces that disable
// every other job from reads made while the jobs were leased, and against
// extensions of the leases. Of a replace and the record of the same job
// exactly one must win (the other fails with ErrConflict), whichever
// commits first; the record counts its change of state in its own
// statement and the replace through the trigger, so after each round
// CountJobs must equal a count of the jobs by state, and both must equal
// the states the winners wrote.
func TestRecordsRaceReplaces(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	const (
		rounds = 8
		jobs   = 40
	)
	// counted returns the jobs of the schema by collection and state.
	counted := func() []scheduler.JobCount {
		t.Helper()
		rows, err := c.Query(ctx, "SELECT collection, state, count(*) FROM "+q+".jobs GROUP BY 1, 2 ORDER BY 1, 2")
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (scheduler.JobCount, error) {
			var jc scheduler.JobCount
			return jc, row.Scan(&jc.Collection, &jc.State, &jc.Jobs)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var want []scheduler.JobCount
	replacesWon, recordsWon := 0, 0
	for round := range rounds {
		coll := fmt.Sprintf("c%02d", round)
		if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: coll}); err != nil {
			t.Fatal(err)
		}
		for i := range jobs {
			j := &scheduler.JobRecord{Collection: coll, Name: fmt.Sprintf("j%02d", i), Job: &scheduler.Job{},
				State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
			if err := s.PutJob(ctx, j); err != nil {
				t.Fatal(err)
			}
		}
		claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 2*jobs)
		if err != nil || len(claimed) != jobs {
			t.Fatalf("round %d: ClaimDue = %d jobs, %v; want %d", round, len(claimed), err, jobs)
		}
		// Every other job is read while leased, to be disabled.
		replaced := map[string]*scheduler.JobRecord{}
		for i, j := range claimed {
			if i%2 == 0 {
				r, err := s.GetJob(ctx, coll, j.Name)
				if err != nil {
					t.Fatal(err)
				}
				r.State, r.Schedule.DueAt = scheduler.JobDisabled, time.Time{}
				replaced[j.Name] = r
			}
		}
		// The outcomes: completed, faulted, or enabled and due later.
		batch := make([]scheduler.RecordRequest, len(claimed))
		outcome := map[string]scheduler.JobState{}
		for i, j := range claimed {
			switch i % 3 {
			case 0:
				j.State, j.Schedule.DueAt = scheduler.JobCompleted, time.Time{}
			case 1:
				j.State, j.Schedule.DueAt = scheduler.JobFaulted, time.Time{}
			case 2:
				j.Schedule.DueAt = t0.Add(time.Hour)
			}
			outcome[j.Name] = j.State
			batch[i] = scheduler.RecordRequest{Job: j, KeepDefinition: i%4 != 3, History: []scheduler.HistoryEntry{{
				Collection: coll, Job: j.Name, Status: scheduler.StatusCompleted, StartTime: t0, EndTime: t0, Message: string(j.State)}}}
		}

		start := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		putErr := map[string]error{}
		for name, r := range replaced {
			wg.Go(func() {
				<-start
				err := s.PutJob(ctx, r)
				mu.Lock()
				defer mu.Unlock()
				putErr[name] = err
			})
		}
		for i, j := range claimed {
			if i%3 == 1 {
				wg.Go(func() {
					<-start
					// The record may have released the lease already.
					if err := s.ExtendLease(ctx, coll, j.Name, "me", t0.Add(2*time.Minute)); err != nil && !errors.Is(err, scheduler.ErrLeaseLost) {
						t.Errorf("ExtendLease(%s/%s): %v", coll, j.Name, err)
					}
				})
			}
		}
		var recErrs []error
		wg.Go(func() {
			<-start
			recErrs = s.RecordBatch(ctx, "me", batch)
		})
		close(start)
		wg.Wait()
		if recErrs == nil {
			recErrs = make([]error, len(batch))
		}

		states := map[scheduler.JobState]int{}
		for i, r := range batch {
			name := r.Job.Name
			pe, raced := putErr[name]
			switch re := recErrs[i]; {
			case !raced && re != nil:
				t.Errorf("round %d: record of %s (not replaced): %v", round, name, re)
			case !raced:
				states[outcome[name]]++
			case re == nil && errors.Is(pe, scheduler.ErrConflict):
				recordsWon++
				states[outcome[name]]++
			case pe == nil && errors.Is(re, scheduler.ErrConflict):
				replacesWon++
				states[scheduler.JobDisabled]++
			default:
				t.Errorf("round %d: %s: record %v, replace %v; want exactly one to fail with ErrConflict", round, name, re, pe)
			}
		}
		for _, st := range []scheduler.JobState{scheduler.JobCompleted, scheduler.JobDisabled, scheduler.JobEnabled, scheduler.JobFaulted} {
			if states[st] > 0 {
				want = append(want, scheduler.JobCount{Collection: coll, State: st, Jobs: states[st]})
			}
		}
		got, err := s.CountJobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round %d: CountJobs (-want +got):\n%s", round, diff)
		}
		if diff := cmp.Diff(want, counted()); diff != "" {
			t.Fatalf("round %d: the jobs by state (-want +counted):\n%s", round, diff)
		}
	}
	t.Logf("of %d races of a record and a replace, the records won %d and the replaces %d", rounds*jobs/2, recordsWon, replacesWon)
}
