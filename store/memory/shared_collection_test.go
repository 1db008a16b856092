package memory_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// TestSharedCollection: SharedCollection returns the record GetCollection
// would, without copying it, and a write to the collection replaces the
// record instead of changing the one lent. Run with -race, the readers
// must not race with the writer.
func TestSharedCollection(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	if _, ok, err := s.SharedCollection(ctx, s, "c"); !ok || !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("SharedCollection of a missing collection: %v, %v; want ErrNotFound", ok, err)
	}
	def := scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 7,
		MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}}}
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c", Definition: def}); err != nil {
		t.Fatal(err)
	}
	lent, ok, err := s.SharedCollection(ctx, s, "c")
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	again, _, _ := s.SharedCollection(ctx, s, "c")
	if lent != again {
		t.Error("SharedCollection copied the record")
	}
	got, err := s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, lent) {
		t.Errorf("SharedCollection = %+v, GetCollection = %+v", lent, got)
	}
	want := got.Clone()
	if _, ok, _ := s.SharedCollection(ctx, wrapper{s}, "c"); ok {
		t.Error("SharedCollection lent its record to a type that embeds the store")
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				r, _, err := s.SharedCollection(ctx, s, "c")
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
	if !reflect.DeepEqual(lent, want) {
		t.Errorf("a write changed the record lent before it:\n%+v\nwant\n%+v", lent, want)
	}
	now, _, _ := s.SharedCollection(ctx, s, "c")
	if q := now.Definition.Properties.Quota; q.MaxJobCount != 59 || q.MaxRecurrence.Interval != 51 {
		t.Errorf("SharedCollection after the writes: quota %+v, want the last one written", q)
	}
}

// wrapper embeds the store, as a host's wrapper would.
type wrapper struct{ *memory.Store }
