package memory_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/putread"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// TestReadForPut: ReadForPut returns the collection's record as
// GetCollection does, without copying it, and the job as GetJob does; a
// write to the collection replaces the record instead of changing the one
// lent; a type that embeds the store is lent nothing. Run with -race, the
// readers must not race with the writer.
func TestReadForPut(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	if _, _, lent, err := readForPut(s, "c", "j"); !lent || !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("ReadForPut of a missing collection: lent %v, %v; want ErrNotFound", lent, err)
	}
	def := scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 7,
		MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}}}
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c", Definition: def}); err != nil {
		t.Fatal(err)
	}
	col, old, lent, err := readForPut(s, "c", "j")
	if !lent || err != nil || old != nil {
		t.Fatalf("ReadForPut of a missing job = %v, %v, %v; want no job, lent", old, lent, err)
	}
	again, _, _, _ := readForPut(s, "c", "j")
	if col != again {
		t.Error("ReadForPut copied the collection's record")
	}
	got, err := s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, col) {
		t.Errorf("ReadForPut's collection = %+v, GetCollection = %+v", col, got)
	}
	want := got.Clone()
	for _, via := range []any{nil, wrapper{s}, &wrapper{s}} {
		if c, o, lent, err := readForPut(via, "c", "j"); lent || c != nil || o != nil || err != nil {
			t.Errorf("ReadForPut via %T = %v, %v, %v, %v; want nothing lent", via, c, o, lent, err)
		}
	}

	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	job := &scheduler.JobRecord{Collection: "c", Name: "j", State: scheduler.JobEnabled, ETag: "e1",
		Job:     &scheduler.Job{StartTime: &at, Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}}},
		Created: at, Updated: at, Schedule: scheduler.JobSchedule{Anchor: at, NextOccurrence: at, DueAt: at}}
	if err := s.PutJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	_, old, _, err = readForPut(s, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(old, stored) {
		t.Errorf("ReadForPut's job = %+v, GetJob = %+v", old, stored)
	}
	old.ETag, old.Version, old.State = "changed", 9, scheduler.JobDisabled
	if r, _ := s.GetJob(ctx, "c", "j"); !reflect.DeepEqual(r, stored) {
		t.Errorf("changing ReadForPut's job changed the stored one: %+v", r)
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				r, _, _, err := readForPut(s, "c", "j")
				if err != nil {
					t.Error(err)
					return
				}
				_ = r.Definition.MaxJobCount() + r.Definition.MaxRecurrence().Interval + len(r.Name)
			}
		})
	}
	for i := range 50 {
		cur, err := s.GetCollection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		cur.Definition.Properties.Quota.MaxJobCount = 10 + i
		cur.Definition.Properties.Quota.MaxRecurrence.Interval = 2 + i
		if err := s.PutCollection(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if !reflect.DeepEqual(col, want) {
		t.Errorf("a write changed the record lent before it:\n%+v\nwant\n%+v", col, want)
	}
	now, _, _, _ := readForPut(s, "c", "j")
	if q := now.Definition.Properties.Quota; q.MaxJobCount != 59 || q.MaxRecurrence.Interval != 51 {
		t.Errorf("ReadForPut after the writes: quota %+v, want the last one written", q)
	}
}

// readForPut reads what a put of job j in collection c needs through the
// read the memory store lends the Scheduler; lent is false when st lends
// none.
func readForPut(st any, c, j string) (col *scheduler.CollectionRecord, old *scheduler.JobRecord, lent bool, err error) {
	r, ok := putread.Of(st).(interface {
		ReadForPut(collection, name string) (*scheduler.CollectionRecord, *scheduler.JobRecord, error)
	})
	if !ok {
		return nil, nil, false, nil
	}
	col, old, err = r.ReadForPut(c, j)
	return col, old, true, err
}

// wrapper embeds the store, as a host's wrapper would.
type wrapper struct{ *memory.Store }
