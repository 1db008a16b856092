package scheduler

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// keptCalls is a LeaseExtender that keeps the jobs of each call and fails
// those named "lost".
type keptCalls struct {
	mu    sync.Mutex
	calls [][]JobKey
}

func (e *keptCalls) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []JobKey) []error {
	e.mu.Lock()
	e.calls = append(e.calls, slices.Clone(jobs))
	e.mu.Unlock()
	errs := make([]error, len(jobs))
	for i, k := range jobs {
		if k.Name == "lost" {
			errs[i] = ErrLeaseLost
		}
	}
	return errs
}

// TestExtendKeysOnce: a job named twice among the leases to extend is sent
// to the store once, and its failure reported at each of its places.
func TestExtendKeysOnce(t *testing.T) {
	e := &keptCalls{}
	s := &Scheduler{cfg: Config{LeaseDuration: time.Second, InstanceID: "me"}, extender: e}
	a, b, lost := JobKey{"c", "a"}, JobKey{"c", "b"}, JobKey{"c", "lost"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []int
	s.extendKeys([]JobKey{a, lost, b, a, lost}, &wg, make(chan struct{}, 1), nil, &leaseFailures{}, func(i int, err error) {
		mu.Lock()
		failed = append(failed, i)
		mu.Unlock()
	})
	wg.Wait()
	if diff := cmp.Diff([][]JobKey{{a, lost, b}}, e.calls); diff != "" {
		t.Errorf("ExtendLeases calls (-want +got):\n%s", diff)
	}
	slices.Sort(failed)
	if diff := cmp.Diff([]int{1, 4}, failed); diff != "" {
		t.Errorf("places failed (-want +got):\n%s", diff)
	}
}
