package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// testListJobsOrder checks ListJobs's orders: by next execution time,
// last execution time and failure count, ties by name, jobs without a
// time after those with one; descending, the exact reverse; filtered by
// state and tag; and pages that follow one another without a gap or a
// repeat.
func testListJobsOrder(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 100)
	putCollection(t, s, "d", 0)
	putJob(t, s, "d", "other", t0.Add(-time.Hour)) // another collection's job, first in every order
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	east := time.FixedZone("east", 2*3600)
	far := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := []struct {
		name       string
		state      scheduler.JobState
		next, last *time.Time
		failures   int
		tags       map[string]string
	}{
		// Times a fraction of a second apart, an instant in another
		// location, times a nanosecond apart and equal times.
		{name: "a", next: at(time.Second), last: at(-time.Second), failures: 2, tags: map[string]string{"t": ""}},
		{name: "b", state: scheduler.JobCompleted, last: at(-3 * time.Second)},
		{name: "c", next: at(500 * time.Millisecond), failures: 2},
		{name: "d", next: at(time.Second), last: at(-time.Second)},
		{name: "e", next: ptr(t0.Add(250 * time.Millisecond).In(east)), last: at(-2500 * time.Millisecond), failures: 5, tags: map[string]string{"t": "x"}},
		{name: "f", state: scheduler.JobDisabled},
		{name: "g", next: at(time.Second + time.Nanosecond), last: at(-time.Second + time.Nanosecond)},
		// Times past 2262, beyond int64 nanoseconds since 1970, in
		// an order other than their names'.
		{name: "h", next: ptr(far.Add(time.Nanosecond))},
		{name: "i", next: ptr(far)},
	}
	for i, j := range jobs {
		r := newJob("c", j.name, time.Time{})
		r.ETag = fmt.Sprintf("%016x", i+1) // as the Scheduler writes them
		if j.state != "" {
			r.State = j.state
		}
		if j.next != nil {
			r.Schedule.DueAt, r.Schedule.NextOccurrence = *j.next, *j.next
		}
		r.Status.NextExecutionTime, r.Status.LastExecutionTime = j.next, j.last
		r.Status.FailureCount, r.Status.ExecutionCount = j.failures, j.failures
		r.Tags = j.tags
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatalf("PutJob(%s): %v", j.name, err)
		}
	}
	tests := []struct {
		name string
		f    scheduler.JobFilter
		want []string
	}{
		{"name", scheduler.JobFilter{}, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}},
		{"next", scheduler.JobFilter{OrderBy: scheduler.JobsByNextExecution}, []string{"e", "c", "a", "d", "g", "i", "h", "b", "f"}},
		{"last", scheduler.JobFilter{OrderBy: scheduler.JobsByLastExecution}, []string{"b", "e", "a", "d", "g", "c", "f", "h", "i"}},
		{"failures", scheduler.JobFilter{OrderBy: scheduler.JobsByFailures}, []string{"b", "d", "f", "g", "h", "i", "a", "c", "e"}},
		{"next of a state", scheduler.JobFilter{OrderBy: scheduler.JobsByNextExecution, State: scheduler.JobEnabled}, []string{"e", "c", "a", "d", "g", "i", "h"}},
		{"next of a tag", scheduler.JobFilter{OrderBy: scheduler.JobsByNextExecution, Tag: scheduler.TagFilter{Name: "t"}}, []string{"e", "a"}},
		{"last of a state", scheduler.JobFilter{OrderBy: scheduler.JobsByLastExecution, State: scheduler.JobDisabled}, []string{"f"}},
		{"failures, a page", scheduler.JobFilter{OrderBy: scheduler.JobsByFailures, Skip: 5, Top: 2}, []string{"i", "a"}},
		{"next, past the end", scheduler.JobFilter{OrderBy: scheduler.JobsByNextExecution, Skip: 9}, nil},
		{"next of no job", scheduler.JobFilter{OrderBy: scheduler.JobsByNextExecution, State: scheduler.JobFaulted}, nil},
	}
	for _, tt := range tests {
		for _, desc := range []bool{false, true} {
			f := tt.f
			f.Descending = desc
			want := tt.want
			if desc && f.Skip == 0 && f.Top == 0 {
				want = slices.Clone(want)
				slices.Reverse(want)
			} else if desc {
				continue // a page of the descending list is checked by the pages below
			}
			got, err := s.ListJobs(ctx, "c", f)
			if err != nil {
				t.Fatalf("ListJobs(%s, descending %v): %v", tt.name, desc, err)
			}
			if ns := orderNames(got); !equal(ns, want) {
				t.Errorf("ListJobs(%s, descending %v) = %v, want %v", tt.name, desc, ns, want)
			}
			if f.Skip != 0 || f.Top != 0 {
				continue
			}
			// Pages of every size, one after another, hold the
			// list without a gap or a repeat.
			for top := 1; top <= len(want); top++ {
				var paged []string
				for skip := 0; skip < len(want)+top; skip += top {
					f.Skip, f.Top = skip, top
					page, err := s.ListJobs(ctx, "c", f)
					if err != nil {
						t.Fatalf("ListJobs(%s, descending %v, skip %d, top %d): %v", tt.name, desc, skip, top, err)
					}
					if len(page) > top {
						t.Fatalf("ListJobs(%s, descending %v, skip %d, top %d) returned %d jobs", tt.name, desc, skip, top, len(page))
					}
					paged = append(paged, orderNames(page)...)
				}
				if !equal(paged, want) {
					t.Errorf("ListJobs(%s, descending %v) in pages of %d = %v, want %v", tt.name, desc, top, paged, want)
				}
			}
		}
	}
	// The records listed in an order are the stored ones.
	list, err := s.ListJobs(ctx, "c", scheduler.JobFilter{OrderBy: scheduler.JobsByLastExecution, Top: 1})
	if err != nil || len(list) != 1 {
		t.Fatalf("ListJobs(last, top 1) = %v, %v", list, err)
	}
	if got := list[0]; got.Name != "b" || got.State != scheduler.JobCompleted || got.Status.LastExecutionTime == nil || !got.Status.LastExecutionTime.Equal(t0.Add(-3*time.Second)) {
		t.Errorf("ListJobs(last, top 1) = %s in state %s, last execution %v; want b, Completed, %v", got.Name, got.State, got.Status.LastExecutionTime, t0.Add(-3*time.Second))
	}
	_, err = s.ListJobs(ctx, "none", scheduler.JobFilter{OrderBy: scheduler.JobsByNextExecution})
	wantErr(t, "ListJobs(missing collection, by next execution)", err, scheduler.ErrNotFound)
}

func orderNames(jobs []*scheduler.JobRecord) []string {
	var ns []string
	for _, j := range jobs {
		ns = append(ns, j.Name)
	}
	return ns
}

func ptr[T any](v T) *T { return &v }
