package scheduler

import (
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestTimingCacheKeepsOwnStrings: the timing cache keys and checks a
// job by copies of its names and ETag, not the claimed record's strings,
// whose bytes a store may share with other records (a SQL store's claim
// reads names and ETags into shared buffers): the cache would otherwise
// keep those buffers alive as long as it keeps the job.
func TestTimingCacheKeepsOwnStrings(t *testing.T) {
	job, err := ParseJob([]byte(`{"action":{"type":"http","request":{"method":"GET","uri":"http://127.0.0.1/"}},
		"recurrence":{"frequency":"minute","interval":5}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	shared := strings.Repeat("x", 4096) + "c1" + "job-1" + `"etag-1"`
	inShared := func(s string) bool {
		p, start := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(shared)))
		return p >= start && p < start+uintptr(len(shared))
	}
	r := &JobRecord{Collection: shared[4096:4098], Name: shared[4098:4103], ETag: shared[4103:], Job: job,
		Schedule: JobSchedule{Anchor: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)}}
	var c timingCache
	first, err := c.get(r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.get(r, nil, nil); again != first {
		t.Fatalf("the second get made a new timing: the cache missed")
	}
	if len(c.m) != 1 {
		t.Fatalf("cache holds %d timings, want 1", len(c.m))
	}
	for k, e := range c.m {
		for what, s := range map[string]string{"collection": k.collection, "name": k.name, "etag": e.etag} {
			if inShared(s) {
				t.Errorf("the cache keeps the record's own %s string %q: its buffer stays alive", what, s)
			}
		}
		if k.collection != "c1" || k.name != "job-1" || e.etag != `"etag-1"` {
			t.Errorf("cache entry %+v %q, want c1/job-1 \"etag-1\"", k, e.etag)
		}
	}
}
