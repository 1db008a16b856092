package memory_test

import (
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) scheduler.Store { return memory.New() })
}

func TestBatchRecorder(t *testing.T) {
	storetest.RunBatchRecorder(t, func(t *testing.T) scheduler.Store { return memory.New() })
}

func TestStats(t *testing.T) {
	storetest.RunStats(t, func(t *testing.T) scheduler.Store { return memory.New() })
}

// TestConformanceAnyTieOrder runs the suites over a store that breaks ties
// between jobs due at the same instant at random, so that the suites keep
// to what the contract says ("ties in any order").
func TestConformanceAnyTieOrder(t *testing.T) {
	for range 3 {
		storetest.Run(t, func(t *testing.T) scheduler.Store { return memory.NewWithRandomTies() })
		storetest.RunBatchRecorder(t, func(t *testing.T) scheduler.Store { return memory.NewWithRandomTies() })
		storetest.RunStats(t, func(t *testing.T) scheduler.Store { return memory.NewWithRandomTies() })
	}
}

func TestRunPolicies(t *testing.T) {
	st := memory.New()
	storetest.RunRunPolicies(t, []scheduler.Store{st, st})
}

func TestClaimAhead(t *testing.T) {
	st := memory.New()
	storetest.RunClaimAhead(t, []scheduler.Store{st, st})
}

func TestOverlap(t *testing.T) {
	st := memory.New()
	storetest.RunOverlap(t, []scheduler.Store{st, st})
	storetest.RunAllowAllTakeover(t, []scheduler.Store{st, st})
}

func TestBulkPutter(t *testing.T) {
	storetest.RunBulkPutter(t, func(t *testing.T) scheduler.Store { return memory.New() })
}

func TestConcurrentPuts(t *testing.T) {
	st := memory.New()
	storetest.RunConcurrentPuts(t, []scheduler.Store{st, st})
}

func TestCounts(t *testing.T) {
	st := memory.New()
	storetest.RunCounts(t, []scheduler.Store{st, st})
}

func TestLimiter(t *testing.T) {
	st := memory.New()
	storetest.RunLimiter(t, []scheduler.Store{st, st})
}

func TestLimits(t *testing.T) {
	st := memory.New()
	storetest.RunLimits(t, []scheduler.Store{st, st, st})
}
