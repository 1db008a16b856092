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
