package telemetry

// TestMetricsByJobKeepsOwnStrings: with MetricsByJob, the attribute sets
// the Observer caches keep copies of a job's names, not the strings of
// the history entry (a claimed record's, whose bytes a SQL store's claim
// may share with a hundred others'), so a cached set does not keep a
// claim's buffer alive.

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	scheduler "github.com/jobclock/scheduler"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func TestMetricsByJobKeepsOwnStrings(t *testing.T) {
	shared := strings.Repeat("x", 4096) + "job-1"
	inShared := func(s string) bool {
		p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(shared)))
		return len(s) > 0 && p >= start && p < start+uintptr(len(shared))
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	o := New(&Options{MeterProvider: mp, MetricsByJob: true})
	now := time.Now()
	o.HistoryStored(scheduler.StoredHistory{Entries: []scheduler.HistoryEntry{{
		Collection: "c", Job: shared[4096:], ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
		StartTime: now, EndTime: now.Add(time.Millisecond), ExpectedExecutionTime: now,
	}}})
	o.mu.RLock()
	defer o.mu.RUnlock()
	if len(o.sets) == 0 {
		t.Fatal("no attribute set cached: the instruments did not record")
	}
	for k := range o.sets {
		if inShared(k.job) {
			t.Errorf("o.sets keeps the entry's own job string %q: its buffer stays alive as long as the set", k.job)
		}
	}
}
