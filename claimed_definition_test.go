package scheduler_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// defsKept is a memory store that remembers each definition its claims
// handed out, with its JSON form then: a store may share the definitions
// it holds with the claimant, which must not modify them.
type defsKept struct {
	*memory.Store
	mu   sync.Mutex
	defs []handedOut
}

type handedOut struct {
	job  string
	def  *scheduler.Job
	json []byte
}

func (s *defsKept) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	return s.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: now, Owner: owner, LeaseUntil: leaseUntil, Limit: limit})
}

func (s *defsKept) ClaimDueBy(ctx context.Context, c scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	claimed, err := s.Store.ClaimDueBy(ctx, c)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range claimed {
		b, err := json.Marshal(r.Job)
		if err != nil {
			panic(err)
		}
		s.defs = append(s.defs, handedOut{r.ID(), r.Job, b})
	}
	return claimed, err
}

// TestSchedulerLeavesClaimedDefinitions runs the jobs of
// TestNoHistoryKeepsStatesAndCounters (attempts, retries, an error action,
// faults, postponed and skipped occurrences, a pause) with history kept and
// with none, and checks that the Scheduler changed none of the definitions
// that the store's claims handed out.
func TestSchedulerLeavesClaimedDefinitions(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  scheduler.Config
	}{{"history kept", scheduler.Config{}}, {"NoHistory", scheduler.Config{HistoryPerJob: scheduler.NoHistory}}} {
		t.Run(tc.name, func(t *testing.T) {
			st := &defsKept{Store: memory.New()}
			synctest.Test(t, func(t *testing.T) {
				noHistoryRun(t, st, tc.cfg)
			})
			if len(st.defs) < len(noHistoryJobs(time.Now())) {
				t.Fatalf("the claims handed out %d definitions, want at least one per job", len(st.defs))
			}
			for _, d := range st.defs {
				b, err := json.Marshal(d.def)
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != string(d.json) {
					t.Errorf("the Scheduler changed the definition of %s that a claim handed out:\nwas %s\nnow %s", d.job, d.json, b)
				}
			}
		})
	}
}
