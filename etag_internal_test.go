package scheduler

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/jobclock/scheduler/recurrence"
)

// TestNewETag: an entity tag is 16 lowercase hexadecimal digits, each of
// the 16 digits turns up in every place, and tags do not repeat.
func TestNewETag(t *testing.T) {
	const n = 4000
	seen := make(map[string]bool, n)
	var places [16][16]bool
	for range n {
		tag := newETag()
		if len(tag) != 16 || strings.Trim(tag, "0123456789abcdef") != "" {
			t.Fatalf("newETag() = %q, want 16 lowercase hexadecimal digits", tag)
		}
		if seen[tag] {
			t.Fatalf("newETag() gave %q twice in %d calls", tag, n)
		}
		seen[tag] = true
		for i := range len(tag) {
			places[i][strings.IndexByte("0123456789abcdef", tag[i])] = true
		}
	}
	for i, digits := range places {
		for d, ok := range digits {
			if !ok {
				t.Errorf("digit %x never at place %d of %d tags", d, i, n)
			}
		}
	}
}

// TestTimingCacheCopiesETag: the timing cache keeps a copy of a job's
// ETag, not the record's string, whose bytes a store may share with other
// records' (the memory store's claims do): keeping it would keep them all.
func TestTimingCacheCopiesETag(t *testing.T) {
	rule := &recurrence.Recurrence{Frequency: recurrence.Hour}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &JobRecord{Collection: "c", Name: "j", ETag: "0123456789abcdef", Job: &Job{Recurrence: rule},
		Schedule: JobSchedule{Anchor: now}}
	var c timingCache
	if _, err := c.get(r, nil, nil); err != nil {
		t.Fatal(err)
	}
	e, ok := c.m[timingKey{"c", "j"}]
	if !ok || e.etag != r.ETag {
		t.Fatalf("cached %+v, %v; want the timing with ETag %q", e, ok, r.ETag)
	}
	if unsafe.StringData(e.etag) == unsafe.StringData(r.ETag) {
		t.Error("the timing cache keeps the record's ETag string itself, not a copy")
	}
}
