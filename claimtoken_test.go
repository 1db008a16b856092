package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// claimCountingStore embeds the memory store and counts its own ClaimDue
// calls: the claim tokens that the embedded store's methods hand out must
// not pass it by.
type claimCountingStore struct {
	*memory.Store
	claims atomic.Int64
}

func (c *claimCountingStore) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	c.claims.Add(1)
	return c.Store.ClaimDue(ctx, now, owner, leaseUntil, limit)
}

func TestClaimTokensOnlyOfTheStoreItself(t *testing.T) {
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if !s.UsesClaimTokens() {
		t.Errorf("a Scheduler over the memory store does not use its claim tokens")
	}
	st := &claimCountingStore{Store: memory.New()}
	s, err = scheduler.New(st, &scheduler.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if s.UsesClaimTokens() {
		t.Fatalf("a Scheduler over a store that embeds the memory store uses the embedded store's claim tokens")
	}
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	job, err := scheduler.ParseJob([]byte(jobJSON(t0, "")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
		t.Fatal(err)
	}
	s.RunDue(ctx, t0.Add(time.Second))
	if st.claims.Load() == 0 {
		t.Errorf("the embedding store's ClaimDue was not called")
	}
}
