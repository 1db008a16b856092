package memory

import (
	"context"
	"testing"
	"time"
	"unsafe"

	scheduler "github.com/jobclock/scheduler"
)

// TestJobSize keeps a job within 80 bytes (a size class of the Go
// allocator): with a million jobs, each byte more is a megabyte.
func TestJobSize(t *testing.T) {
	if n := unsafe.Sizeof(job{}); n > 80 {
		t.Errorf("a job takes %d bytes, want at most 80", n)
	}
}

// TestMoreSize keeps the part a job makes when it is first claimed within
// 144 bytes (a size class): every occurrence of a one-time job makes one.
func TestMoreSize(t *testing.T) {
	if n := unsafe.Sizeof(more{}); n > 144 {
		t.Errorf("a job's more part takes %d bytes, want at most 144", n)
	}
}

// TestBigVersions: a job's Version goes on past what the job itself holds
// (2^32-1), kept in its more part from there on.
func TestBigVersions(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	r := &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled, ETag: "0123456789abcdef",
		Created: now, Updated: now, Schedule: scheduler.JobSchedule{Anchor: now}}
	if err := s.PutJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	s.colls["c"].jobs["j"].setVersion(bigVersion - 1)
	for want := int64(bigVersion); want < bigVersion+3; want++ {
		r.Version = want - 1
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatalf("PutJob at version %d: %v", r.Version, err)
		}
		got, err := s.GetJob(ctx, "c", "j")
		if err != nil || got.Version != want {
			t.Fatalf("GetJob: version %d, %v; want %d", got.Version, err, want)
		}
	}
	r.Version = bigVersion - 1
	if err := s.PutJob(ctx, r); err == nil {
		t.Errorf("PutJob at a stale version %d succeeded", r.Version)
	}
}
