package memory

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
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
// 112 bytes (a size class): every occurrence of a one-time job makes one,
// and every job that has run keeps one.
func TestMoreSize(t *testing.T) {
	if n := unsafe.Sizeof(more{}); n > 112 {
		t.Errorf("a job's more part takes %d bytes, want at most 112", n)
	}
}

// TestBigVersions: a job's Version goes on past what the job itself holds
// (2^32-1), kept in the Version of its record, kept whole, from there on.
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
		if err != nil {
			t.Fatal(err)
		}
		w := drawn(s, r.Clone())
		w.Version = want
		if diff := cmp.Diff(w, got); diff != "" {
			t.Fatalf("GetJob after a put to version %d (-want +got):\n%s", want, diff)
		}
	}
	r.Version = bigVersion - 1
	if err := s.PutJob(ctx, r); err == nil {
		t.Errorf("PutJob at a stale version %d succeeded", r.Version)
	}
}

// TestBigVersionsClaimed: a job whose Version passes what the job itself
// holds while it is claimed and recorded (by Record and by RecordBatch)
// keeps its Version, its record and its lease right.
func TestBigVersionsClaimed(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, batch := range []bool{false, true} {
		s := New()
		if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
			t.Fatal(err)
		}
		r := &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled, ETag: "0123456789abcdef",
			Created: now, Updated: now, Schedule: scheduler.JobSchedule{Anchor: now, DueAt: now, NextOccurrence: now}}
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatal(err)
		}
		s.colls["c"].jobs["j"].setVersion(bigVersion - 2)
		for round := range 3 {
			at := now.Add(time.Duration(round) * time.Minute)
			claimed, err := s.ClaimDue(ctx, at, "me", at.Add(time.Minute), 1)
			if err != nil || len(claimed) != 1 {
				t.Fatalf("batch %v, round %d: ClaimDue: %d jobs, %v", batch, round, len(claimed), err)
			}
			c := claimed[0]
			if want := int64(bigVersion) - 1 + 2*int64(round); c.Version != want || c.LeaseOwner != "me" {
				t.Fatalf("batch %v, round %d: claimed version %d, lease %q; want %d, me", batch, round, c.Version, c.LeaseOwner, want)
			}
			next := at.Add(time.Minute)
			c.Status.ExecutionCount++
			c.Status.LastExecutionTime = &at
			c.Schedule.DueAt, c.Schedule.NextOccurrence = next, next
			c.Updated = at
			// The record as recorded, one version on, its lease released
			// (a claim's Handle is the claim's); taken before the record,
			// as the store may keep c.
			w := c.Clone()
			w.Version = int64(bigVersion) + 2*int64(round)
			w.LeaseOwner, w.LeaseUntil, w.PreviousLeaseOwner, w.PreviousLeaseUntil, w.Handle = "", time.Time{}, "", time.Time{}, nil
			if batch {
				if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: c, KeepDefinition: true}}); errs != nil {
					t.Fatalf("batch %v, round %d: RecordBatch: %v", batch, round, errs)
				}
			} else if err := s.Record(ctx, "me", c, nil); err != nil {
				t.Fatalf("batch %v, round %d: Record: %v", batch, round, err)
			}
			got, err := s.GetJob(ctx, "c", "j")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Fatalf("batch %v, round %d: GetJob after the record (-want +got):\n%s", batch, round, diff)
			}
		}
	}
}
