package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// hookStore is a memory store that runs a function once, armed by the
// test, just before a chosen method goes on: it stands for another
// writer that gets between two steps of a write.
type hookStore struct {
	*memory.Store
	mu     sync.Mutex
	method string // "PutJob", "PutJobs", "DeleteJob", "ListJobs", "PutCollection" or "GetCollection"
	hook   func()
}

// arm makes the next call of method run hook first.
func (h *hookStore) arm(method string, hook func()) {
	h.mu.Lock()
	h.method, h.hook = method, hook
	h.mu.Unlock()
}

func (h *hookStore) fire(method string) {
	h.mu.Lock()
	hook := h.hook
	if h.method != method {
		hook = nil
	}
	if hook != nil {
		h.hook = nil
	}
	h.mu.Unlock()
	if hook != nil {
		hook()
	}
}

func (h *hookStore) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	h.fire("PutJob")
	return h.Store.PutJob(ctx, j)
}

func (h *hookStore) PutJobs(ctx context.Context, collection string, jobs []*scheduler.JobRecord) error {
	h.fire("PutJobs")
	return h.Store.PutJobs(ctx, collection, jobs)
}

func (h *hookStore) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	h.fire("GetCollection")
	return h.Store.GetCollection(ctx, name)
}

func (h *hookStore) PutCollection(ctx context.Context, c *scheduler.CollectionRecord) error {
	h.fire("PutCollection")
	return h.Store.PutCollection(ctx, c)
}

func (h *hookStore) DeleteJob(ctx context.Context, collection, name, etag string) error {
	h.fire("DeleteJob")
	return h.Store.DeleteJob(ctx, collection, name, etag)
}

func (h *hookStore) ListJobs(ctx context.Context, collection string, f scheduler.JobFilter) ([]*scheduler.JobRecord, error) {
	h.fire("ListJobs")
	return h.Store.ListJobs(ctx, collection, f)
}

// hookScheduler returns a Scheduler over a hookStore, with collection c
// and its calendar "cal".
func hookScheduler(t *testing.T) (*hookStore, *scheduler.Scheduler) {
	t.Helper()
	st := &hookStore{Store: memory.New()}
	return st, calendarScheduler(t, st)
}

// calendarScheduler returns a Scheduler over st holding collection c
// with the calendar cal (holidays).
func calendarScheduler(t *testing.T, st scheduler.Store) *scheduler.Scheduler {
	t.Helper()
	ctx := context.Background()
	s, err := scheduler.New(st, &scheduler.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCalendar(ctx, "c", "cal", holidays(), nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCalendarDeletedDuringPut: a job put that names a calendar and a
// deletion of the calendar at the same moment never leave a job naming a
// deleted calendar. A put whose write lands after the deletion looked for
// jobs is undone (the job is as it was before, or does not exist) and
// fails at recurrence.calendar, whichever write made it: PutJob creating
// or replacing the job, PatchJob, PutJobs. A put that reads the
// collection while the deletion looks for jobs finds the calendar being
// deleted.
func TestCalendarDeletedDuringPut(t *testing.T) {
	ctx := context.Background()
	naming := `"recurrence": {"frequency": "Day", "calendar": "cal"}`
	tests := []struct {
		name   string
		method string // the store method before which the deletion runs
		plain  bool   // the job exists, naming no calendar, before the put
		put    func(s *scheduler.Scheduler, job *scheduler.Job) error
	}{
		{"PutJob creating the job", "PutJob", false, func(s *scheduler.Scheduler, job *scheduler.Job) error {
			_, err := s.PutJob(ctx, "c", "j", job, nil)
			return err
		}},
		{"PutJob replacing the job", "PutJob", true, func(s *scheduler.Scheduler, job *scheduler.Job) error {
			_, err := s.PutJob(ctx, "c", "j", job, nil)
			return err
		}},
		{"PatchJob", "PutJob", true, func(s *scheduler.Scheduler, job *scheduler.Job) error {
			_, err := s.PatchJob(ctx, "c", "j", []byte(`{"recurrence": {"calendar": "cal"}}`), nil)
			return err
		}},
		{"PutJobs", "PutJobs", true, func(s *scheduler.Scheduler, job *scheduler.Job) error {
			_, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "j", Job: job}, {Name: "k", Job: job}}, nil)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, s := hookScheduler(t)
			start := time.Now().Add(time.Hour)
			var before *scheduler.JobRecord
			if tt.plain {
				plain, err := scheduler.ParseJob([]byte(jobJSON(start, `"recurrence": {"frequency": "Day"}`)), nil)
				if err != nil {
					t.Fatal(err)
				}
				if before, err = s.PutJob(ctx, "c", "j", plain, nil); err != nil {
					t.Fatal(err)
				}
			}
			job, err := scheduler.ParseJob([]byte(jobJSON(start, naming)), nil)
			if err != nil {
				t.Fatal(err)
			}
			var delErr error
			st.arm(tt.method, func() { delErr = s.DeleteCalendar(ctx, "c", "cal", nil) })
			err = tt.put(s, job)
			if delErr != nil {
				t.Fatalf("DeleteCalendar before the put's write: %v", delErr)
			}
			var ve *scheduler.ValidationError
			if !errors.As(err, &ve) || ve.Path != "recurrence.calendar" || !strings.Contains(ve.Reason, "deleted") {
				t.Errorf("put whose calendar was deleted before its write: err = %v, want a ValidationError at recurrence.calendar", err)
			}
			got, err := s.GetJob(ctx, "c", "j")
			switch {
			case before == nil && !errors.Is(err, scheduler.ErrNotFound):
				t.Errorf("GetJob after the undone create: %+v, %v, want ErrNotFound", got, err)
			case before != nil && err != nil:
				t.Fatalf("GetJob after the undone replace: %v", err)
			case before != nil && (got.ETag != before.ETag || got.Job.Recurrence.Ext().Calendar != ""):
				t.Errorf("job after the undone replace: ETag %q, calendar %q, want ETag %q and no calendar",
					got.ETag, got.Job.Recurrence.Ext().Calendar, before.ETag)
			}
			if _, err := s.GetJob(ctx, "c", "k"); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("GetJob(k) after the undone batch: err = %v, want ErrNotFound", err)
			}
		})
	}

	t.Run("put while the deletion looks for jobs", func(t *testing.T) {
		st, s := hookScheduler(t)
		job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), naming)), nil)
		if err != nil {
			t.Fatal(err)
		}
		var putErr error
		st.arm("ListJobs", func() { _, putErr = s.PutJob(ctx, "c", "j", job, nil) })
		delErr := s.DeleteCalendar(ctx, "c", "cal", nil)
		_, jobErr := s.GetJob(ctx, "c", "j")
		_, calErr := s.GetCalendar(ctx, "c", "cal")
		switch {
		case putErr == nil && (delErr == nil || calErr != nil):
			t.Errorf("put during the deletion succeeded, and the deletion too (err %v; GetCalendar: %v)", delErr, calErr)
		case putErr != nil && (delErr != nil || !errors.Is(jobErr, scheduler.ErrNotFound)):
			t.Errorf("put during the deletion failed (%v), and the deletion too (%v), or the job is there (%v)", putErr, delErr, jobErr)
		}
		var ve *scheduler.ValidationError
		if !errors.As(putErr, &ve) || ve.Path != "recurrence.calendar" || !strings.Contains(ve.Reason, "being deleted") {
			t.Errorf("put while the calendar is marked for deletion: err = %v, want a ValidationError at recurrence.calendar", putErr)
		}
	})
}

// TestMissingCalendarLogged: a job whose calendar its collection does
// not have (a store written past the Scheduler) runs with none, and the
// Scheduler says so in its log, once for the job's version.
func TestMissingCalendarLogged(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	writer, err := scheduler.New(st, &scheduler.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.PutCalendar(ctx, "c", "cal", holidays(), nil); err != nil {
		t.Fatal(err)
	}
	job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Day", "calendar": "cal"}`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.PutJob(ctx, "c", "j", job, nil); err != nil {
		t.Fatal(err)
	}
	col, err := st.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	col.Definition.Calendars = nil
	if err := st.PutCollection(ctx, col); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	reader, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := reader.GetJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
	}
	got := log.String()
	if n := strings.Count(got, "calendar=cal"); n != 1 || !strings.Contains(got, "level=WARN") || !strings.Contains(got, "job=j") {
		t.Errorf("log = %q, want one warning naming job j and calendar cal", got)
	}
}

// TestCalendarReplacedDuringPut: a job put that names a calendar and a
// replacement of the calendar that leaves the job no occurrence never
// both succeed, whichever comes first: a put whose write lands between
// the replacement's look for jobs and its write of the calendar, one
// that lands before the replacement begins, and one that runs while the
// replacement looks for jobs. Where both would have succeeded, a job would
// name a calendar that leaves it no occurrence.
func TestCalendarReplacedDuringPut(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		arm  func(st *hookStore, put func())
	}{
		{"put before the replacement's write", func(st *hookStore, put func()) {
			st.arm("PutCollection", put)
		}},
		{"put between the replacement's look for jobs and its write", func(st *hookStore, put func()) {
			st.arm("ListJobs", func() { st.arm("PutCollection", put) })
		}},
		{"put while the replacement looks for jobs", func(st *hookStore, put func()) {
			st.arm("ListJobs", put)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, s := hookScheduler(t)
			// The job runs on 1 May of each year, which the new calendar
			// excludes.
			job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour),
				`"recurrence": {"frequency": "Month", "schedule": {"months": [5], "monthDays": [1], "hours": [12], "minutes": [0]}, "calendar": "cal"}`)), nil)
			if err != nil {
				t.Fatal(err)
			}
			may := &scheduler.Calendar{Properties: scheduler.CalendarProperties{TimeZone: "UTC",
				Rules: []*recurrence.Recurrence{{Frequency: recurrence.Year, Schedule: &recurrence.Schedule{Months: []int{5}, MonthDays: []int{1}}}}}}
			plain := &scheduler.Calendar{Properties: scheduler.CalendarProperties{Dates: []string{"2000-01-01"}}}
			if _, err := s.PutCalendar(ctx, "c", "cal", plain, nil); err != nil {
				t.Fatal(err)
			}
			var putErr error
			tt.arm(st, func() { _, putErr = s.PutJob(ctx, "c", "j", job, nil) })
			_, calErr := s.PutCalendar(ctx, "c", "cal", may, nil)
			if putErr == nil && calErr == nil {
				t.Fatalf("the put of a job and the replacement of its calendar that leaves it no occurrence both succeeded")
			}
			var ve *scheduler.ValidationError
			if putErr != nil && (!errors.As(putErr, &ve) || ve.Path != "recurrence.calendar") {
				t.Errorf("put: err = %v, want a ValidationError at recurrence.calendar", putErr)
			}
			if calErr != nil && (!errors.As(calErr, &ve) || ve.Path != "properties") {
				t.Errorf("PutCalendar: err = %v, want a ValidationError at properties", calErr)
			}
			cal, err := s.GetCalendar(ctx, "c", "cal")
			if err != nil {
				t.Fatal(err)
			}
			_, jobErr := s.GetJob(ctx, "c", "j")
			if len(cal.Calendar.Properties.Rules) > 0 && jobErr == nil {
				t.Errorf("the job exists, naming a calendar that leaves it no occurrence")
			}
			if len(cal.Calendar.Properties.Rules) == 0 && calErr == nil {
				t.Errorf("PutCalendar succeeded, and the calendar is the old one")
			}
			if putErr != nil && !errors.Is(jobErr, scheduler.ErrNotFound) {
				t.Errorf("GetJob after the failed put: err = %v, want ErrNotFound", jobErr)
			}
			col, err := st.GetCollection(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			if e := col.Definition.Calendars["cal"]; e.Next != nil {
				t.Errorf("the calendar's entry still holds the replacement being checked: %+v", e.Next)
			}
		})
	}
}

// TestQuotaTightenedDuringPut: a put of a job and a write of its
// collection whose maxRecurrence the job recurs more often than never
// both succeed, whichever comes first: a put that lands before the
// collection's write begins, one between the write's look for jobs and
// its write, one while it looks for jobs, and one whose write lands after
// the collection's write but was checked against the collection before it.
func TestQuotaTightenedDuringPut(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		arm  func(st *hookStore, put, tighten func())
		// first says which of the two the test runs itself.
		putFirst bool
	}{
		{"put before the collection's write", func(st *hookStore, put, tighten func()) {
			st.arm("PutCollection", put)
		}, false},
		{"put between the look for jobs and the write", func(st *hookStore, put, tighten func()) {
			st.arm("ListJobs", func() { st.arm("PutCollection", put) })
		}, false},
		{"put while the write looks for jobs", func(st *hookStore, put, tighten func()) {
			st.arm("ListJobs", put)
		}, false},
		{"collection written between the put's read and its write", func(st *hookStore, put, tighten func()) {
			st.arm("PutJob", tighten)
		}, true},
		{"collection written between a patch's read and its write", func(st *hookStore, put, tighten func()) {
			st.arm("PutJob", tighten)
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, s := hookScheduler(t)
			job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Minute", "interval": 5}`)), nil)
			if err != nil {
				t.Fatal(err)
			}
			hourly := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
				Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}}}
			var putErr, colErr error
			put := func() { _, putErr = s.PutJob(ctx, "c", "j", job, nil) }
			if strings.Contains(tt.name, "patch") {
				hourlyJob, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Hour"}`)), nil)
				if err != nil {
					t.Fatal(err)
				}
				before, err := s.PutJob(ctx, "c", "j", hourlyJob, nil)
				if err != nil {
					t.Fatal(err)
				}
				put = func() {
					_, putErr = s.PatchJob(ctx, "c", "j", []byte(`{"recurrence": {"frequency": "Minute", "interval": 5}}`), nil)
					if got, err := s.GetJob(ctx, "c", "j"); err != nil || got.ETag != before.ETag {
						t.Errorf("job after the patch: %v, %v, want it as before the patch (ETag %s)", got, err, before.ETag)
					}
				}
			}
			tighten := func() { _, colErr = s.PutCollection(ctx, "c", hourly, nil) }
			tt.arm(st, put, tighten)
			if tt.putFirst {
				put()
			} else {
				tighten()
			}
			if putErr == nil && colErr == nil {
				t.Fatalf("the put of a job every 5 minutes and the write of its collection allowing one an hour both succeeded")
			}
			for what, err := range map[string]error{"PutJob": putErr, "PutCollection": colErr} {
				if err != nil && !errors.Is(err, scheduler.ErrQuotaExceeded) {
					t.Errorf("%s: err = %v, want ErrQuotaExceeded", what, err)
				}
			}
			col, err := st.GetCollection(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			_, jobErr := s.GetJob(ctx, "c", "j")
			if col.Definition.MaxRecurrence().Frequency == recurrence.Hour && jobErr == nil && !strings.Contains(tt.name, "patch") {
				t.Errorf("the job exists in a collection that allows one occurrence an hour")
			}
			if putErr != nil && !strings.Contains(tt.name, "patch") && !errors.Is(jobErr, scheduler.ErrNotFound) {
				t.Errorf("GetJob after the failed put: err = %v, want ErrNotFound", jobErr)
			}
			if col.Definition.Checking != nil {
				t.Errorf("the collection still holds the maxRecurrence being checked: %+v", col.Definition.Checking)
			}
		})
	}
}

// TestQuotaCheckCleared: another write of a collection while a stricter
// maxRecurrence is checked against its jobs clears the mark, and the
// stricter write fails with ErrConflict, writing nothing.
func TestQuotaCheckCleared(t *testing.T) {
	ctx := context.Background()
	st, s := hookScheduler(t)
	hourly := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}}}
	var patchErr error
	st.arm("ListJobs", func() { _, patchErr = s.PatchCollection(ctx, "c", []byte(`{"tags": {"team": "ops"}}`), nil) })
	_, err := s.PutCollection(ctx, "c", hourly, nil)
	if patchErr != nil {
		t.Fatalf("PatchCollection during the check: %v", patchErr)
	}
	if !errors.Is(err, scheduler.ErrConflict) {
		t.Errorf("PutCollection overtaken during its check: err = %v, want ErrConflict", err)
	}
	col, err := st.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if col.Definition.Checking != nil || col.Definition.MaxRecurrence().Frequency == recurrence.Hour || col.Definition.Tags["team"] != "ops" {
		t.Errorf("collection %+v, want the patch's tags, no mark and the old maxRecurrence", col.Definition)
	}
}

// TestQuotaTightenedDuringPutOverFinal: a put over a Completed or Faulted
// job with the same recurrence is checked again after its write like any
// other: a stricter collection write does not look at jobs in a final
// state, so a put that read the collection before that write and wrote
// the job after it would otherwise bring back a job that recurs more
// often than the collection allows. PutJob and PutJobs alike.
func TestQuotaTightenedDuringPutOverFinal(t *testing.T) {
	ctx := context.Background()
	for _, state := range []scheduler.JobState{scheduler.JobCompleted, scheduler.JobFaulted} {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s batch=%v", state, batch), func(t *testing.T) {
				st, s := hookScheduler(t)
				job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Minute", "interval": 5}`)), nil)
				if err != nil {
					t.Fatal(err)
				}
				r, err := s.PutJob(ctx, "c", "j", job, nil)
				if err != nil {
					t.Fatal(err)
				}
				r.State = state
				if err := st.Store.PutJob(ctx, r); err != nil {
					t.Fatal(err)
				}
				hourly := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
					Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}}}
				var colErr, putErr error
				tighten := func() { _, colErr = s.PutCollection(ctx, "c", hourly, nil) }
				if batch {
					st.arm("PutJobs", tighten)
					_, putErr = s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "j", Job: job}}, nil)
				} else {
					st.arm("PutJob", tighten)
					_, putErr = s.PutJob(ctx, "c", "j", job, nil)
				}
				if colErr != nil {
					t.Fatalf("PutCollection during the put: %v", colErr)
				}
				if !errors.Is(putErr, scheduler.ErrQuotaExceeded) {
					t.Errorf("put over the %s job: err = %v, want ErrQuotaExceeded", state, putErr)
				}
				got, err := s.GetJob(ctx, "c", "j")
				if err != nil {
					t.Fatal(err)
				}
				if got.State != state {
					t.Errorf("job after the failed put: state %s, want %s as before", got.State, state)
				}
			})
		}
	}
}

// TestUndoneCreateKeepsLaterPut: a put that created a job and is undone
// (the collection was tightened meanwhile) deletes only the version it
// wrote: a put that replaced the job between the write and the undo, and
// succeeded, keeps its job, also when it lands just before the undo's
// delete.
func TestUndoneCreateKeepsLaterPut(t *testing.T) {
	for _, at := range []string{
		"GetCollection", // the first put's check after its write
		"DeleteJob",     // the first put's undo, before the store deletes
	} {
		t.Run(at, func(t *testing.T) {
			ctx := context.Background()
			st, s := hookScheduler(t)
			often, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Minute", "interval": 5}`)), nil)
			if err != nil {
				t.Fatal(err)
			}
			hourly, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Hour"}`)), nil)
			if err != nil {
				t.Fatal(err)
			}
			limit := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
				Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}}}
			var colErr, bErr error
			var b *scheduler.JobRecord
			st.arm("PutJob", func() {
				_, colErr = s.PutCollection(ctx, "c", limit, nil)
				st.arm(at, func() { b, bErr = s.PutJob(ctx, "c", "j", hourly, nil) })
			})
			_, aErr := s.PutJob(ctx, "c", "j", often, nil)
			if colErr != nil || bErr != nil {
				t.Fatalf("PutCollection: %v; the second PutJob: %v", colErr, bErr)
			}
			if b == nil {
				t.Fatalf("the second PutJob did not run: the first made no %s call after its write", at)
			}
			if !errors.Is(aErr, scheduler.ErrQuotaExceeded) {
				t.Errorf("the first PutJob: err = %v, want ErrQuotaExceeded", aErr)
			}
			got, err := s.GetJob(ctx, "c", "j")
			if err != nil {
				t.Fatalf("GetJob after the second put succeeded: %v", err)
			}
			if got.ETag != b.ETag {
				t.Errorf("GetJob: ETag %s, want %s, the second put's", got.ETag, b.ETag)
			}
		})
	}
}

// outageStore is a memory store whose PutCollection fails, once, at the
// n-th call after arm.
type outageStore struct {
	*memory.Store
	mu sync.Mutex
	n  int // calls to go before the failing one; 0: none fails
}

func (o *outageStore) arm(n int) {
	o.mu.Lock()
	o.n = n
	o.mu.Unlock()
}

func (o *outageStore) PutCollection(ctx context.Context, c *scheduler.CollectionRecord) error {
	o.mu.Lock()
	fail := o.n == 1
	if o.n > 0 {
		o.n--
	}
	o.mu.Unlock()
	if fail {
		return errors.New("store unavailable")
	}
	return o.Store.PutCollection(ctx, c)
}

// TestMarkClearedAfterOutage: a calendar replacement that is refused and a
// stricter maxRecurrence that a job does not fit fail as they should, and
// their mark on the collection (CalendarEntry.Next, Checking) is gone,
// when the store fails the write that clears it once.
func TestMarkClearedAfterOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := &outageStore{Store: memory.New()}
		s := calendarScheduler(t, st)
		for name, rec := range map[string]string{"daily": `{"frequency": "Day", "calendar": "cal"}`, "often": `{"frequency": "Minute", "interval": 5}`} {
			job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": `+rec)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutJob(ctx, "c", name, job, nil); err != nil {
				t.Fatal(err)
			}
		}
		everything, err := scheduler.ParseCalendar([]byte(`{"properties": {"rules": [{"frequency": "Day"}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		st.arm(2) // the first write marks, the second clears
		if _, err := s.PutCalendar(ctx, "c", "cal", everything, nil); !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("PutCalendar leaving a job no occurrence: err = %v, want ErrInvalid", err)
		}
		hourly := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
			Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}}}
		st.arm(2)
		if _, err := s.PutCollection(ctx, "c", hourly, nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
			t.Errorf("PutCollection with a maxRecurrence a job does not fit: err = %v, want ErrQuotaExceeded", err)
		}
		col, err := st.GetCollection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if e := col.Definition.Calendars["cal"]; e.Next != nil {
			t.Errorf("the refused calendar version is still marked: %+v", e.Next)
		}
		if c := col.Definition.Checking; c != nil {
			t.Errorf("the refused maxRecurrence is still marked: %+v", c)
		}
	})
}

// TestStricterWriteOverJobCount: a write of a collection with a stricter
// maxRecurrence that all its jobs fit, but a maxJobCount below the number
// of its jobs, fails with ErrQuotaExceeded and leaves no mark.
func TestStricterWriteOverJobCount(t *testing.T) {
	ctx := context.Background()
	_, s := hookScheduler(t)
	job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Day"}`)), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := s.PutJob(ctx, "c", name, job, nil); err != nil {
			t.Fatal(err)
		}
	}
	def := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxJobCount: 1, MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}}}
	if _, err := s.PutCollection(ctx, "c", def, nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutCollection with maxJobCount 1 over 2 jobs: err = %v, want ErrQuotaExceeded", err)
	}
	col, err := s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c := col.Definition.Checking; c != nil {
		t.Errorf("the refused maxRecurrence is still marked: %+v", c)
	}
}

// TestStaleMarks: the marks of a write under way on a collection
// (Checking, a calendar's Next) hold puts of jobs for MarkLifetime after
// they were made, and no longer: a mark left behind by a writer that
// stopped stops refusing puts then, and the next write of the
// collection drops it. A write whose check of the jobs takes more than
// half of MarkLifetime fails with ErrConflict and leaves no mark.
func TestStaleMarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, s := hookScheduler(t)
		parse := func(rec string) *scheduler.Job {
			job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": `+rec)), nil)
			if err != nil {
				t.Fatal(err)
			}
			return job
		}
		daily, often := parse(`{"frequency": "Day", "calendar": "cal"}`), parse(`{"frequency": "Minute", "interval": 5}`)
		if _, err := s.PutJob(ctx, "c", "daily", daily, nil); err != nil {
			t.Fatal(err)
		}
		hourly := scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}
		everything, err := scheduler.ParseCalendar([]byte(`{"properties": {"rules": [{"frequency": "Day"}]}}`))
		if err != nil {
			t.Fatal(err)
		}

		// Slow checks give up.
		slow := func() { time.Sleep(scheduler.MarkLifetime/2 + time.Second) }
		st.arm("ListJobs", slow)
		if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
			Quota: &scheduler.Quota{MaxRecurrence: &hourly}}}, nil); !errors.Is(err, scheduler.ErrConflict) {
			t.Errorf("PutCollection whose check took %v: err = %v, want ErrConflict", scheduler.MarkLifetime/2+time.Second, err)
		}
		st.arm("ListJobs", slow)
		if _, err := s.PutCalendar(ctx, "c", "cal", calendarOf(t, `{"properties": {"dates": ["2000-01-05"]}}`), nil); !errors.Is(err, scheduler.ErrConflict) {
			t.Errorf("PutCalendar whose check took %v: err = %v, want ErrConflict", scheduler.MarkLifetime/2+time.Second, err)
		}
		col, err := st.GetCollection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		if col.Definition.Checking != nil || col.Definition.Calendars["cal"].Next != nil || col.Definition.MaxRecurrence().Frequency == recurrence.Hour {
			t.Errorf("collection after the slow writes: Checking %+v, cal %+v, maxRecurrence %s; want neither mark and the old maxRecurrence",
				col.Definition.Checking, col.Definition.Calendars["cal"], col.Definition.MaxRecurrence())
		}

		// Marks left behind by a writer that stopped.
		col.Definition.Checking = &scheduler.QuotaCheck{ID: "left", MaxRecurrence: hourly, At: time.Now()}
		col.Definition.Calendars["cal"].Next = &scheduler.CalendarEntry{ETag: "left", Calendar: *everything, At: time.Now()}
		if err := st.Store.PutCollection(ctx, col); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "c", "often", often, nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
			t.Errorf("PutJob under a fresh Checking mark: err = %v, want ErrQuotaExceeded", err)
		}
		if _, err := s.PutJob(ctx, "c", "daily2", daily, nil); !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("PutJob under a fresh Next mark: err = %v, want ErrInvalid", err)
		}
		time.Sleep(scheduler.MarkLifetime + time.Second)
		if _, err := s.PutJob(ctx, "c", "often", often, nil); err != nil {
			t.Errorf("PutJob under a stale Checking mark: %v", err)
		}
		if _, err := s.PutJob(ctx, "c", "daily2", daily, nil); err != nil {
			t.Errorf("PutJob under a stale Next mark: %v", err)
		}
		if _, err := s.PutCalendar(ctx, "c", "other", holidays(), nil); err != nil {
			t.Fatal(err)
		}
		if col, err = st.GetCollection(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		if col.Definition.Checking != nil || col.Definition.Calendars["cal"].Next != nil {
			t.Errorf("collection after a write: Checking %+v, cal's Next %+v; want both dropped", col.Definition.Checking, col.Definition.Calendars["cal"].Next)
		}
	})
}

// TestStaleDeletionMark: the deletion mark of a calendar (Deleting) holds
// puts of jobs naming it for MarkLifetime from DeletingAt, and no longer;
// one written without an instant holds none. The next write of the
// collection drops a stale one. A deletion whose look for jobs takes more
// than half of MarkLifetime fails with ErrConflict and leaves the
// calendar and no mark.
func TestStaleDeletionMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, s := hookScheduler(t)
		job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Day", "calendar": "cal"}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		mark := func(at time.Time) {
			t.Helper()
			col, err := st.GetCollection(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			col.Definition.Calendars["cal"].Deleting, col.Definition.Calendars["cal"].DeletingAt = true, at
			if err := st.Store.PutCollection(ctx, col); err != nil {
				t.Fatal(err)
			}
		}
		marked := func() *scheduler.CalendarEntry {
			t.Helper()
			col, err := st.GetCollection(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			return col.Definition.Calendars["cal"]
		}

		st.arm("ListJobs", func() { time.Sleep(scheduler.MarkLifetime/2 + time.Second) })
		if err := s.DeleteCalendar(ctx, "c", "cal", nil); !errors.Is(err, scheduler.ErrConflict) {
			t.Errorf("DeleteCalendar whose look for jobs took %v: err = %v, want ErrConflict", scheduler.MarkLifetime/2+time.Second, err)
		}
		if e := marked(); e == nil {
			t.Fatal("the slow deletion deleted the calendar, want it there")
		} else if e.Deleting || !e.DeletingAt.IsZero() {
			t.Errorf("calendar after the slow deletion: Deleting %v at %v, want it unmarked", e.Deleting, e.DeletingAt)
		}

		// A mark left behind by a deletion that stopped.
		mark(time.Now())
		if _, err := s.PutJob(ctx, "c", "j1", job, nil); !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("PutJob under a fresh deletion mark: err = %v, want ErrInvalid", err)
		}
		time.Sleep(scheduler.MarkLifetime + time.Second)
		if _, err := s.PutJob(ctx, "c", "j1", job, nil); err != nil {
			t.Errorf("PutJob under a stale deletion mark: %v", err)
		}
		if _, err := s.PutCalendar(ctx, "c", "other", holidays(), nil); err != nil {
			t.Fatal(err)
		}
		if e := marked(); e.Deleting || !e.DeletingAt.IsZero() {
			t.Errorf("calendar after a write of its collection: Deleting %v at %v, want the stale mark dropped", e.Deleting, e.DeletingAt)
		}

		// A mark without an instant.
		mark(time.Time{})
		if _, err := s.PutJob(ctx, "c", "j2", job, nil); err != nil {
			t.Errorf("PutJob under a deletion mark without an instant: %v", err)
		}
		if _, err := s.PutCalendar(ctx, "c", "other", holidays(), nil); err != nil {
			t.Fatal(err)
		}
		if e := marked(); e.Deleting {
			t.Errorf("calendar after a write of its collection: Deleting %v, want the mark without an instant dropped", e.Deleting)
		}
	})
}
