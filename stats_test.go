package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// countingStore hides the optional capabilities of the store it wraps, and
// counts the calls of ListHistory.
type countingStore struct {
	scheduler.Store
	historyCalls atomic.Int64
}

func (p *countingStore) ListHistory(ctx context.Context, collection, job string, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	p.historyCalls.Add(1)
	return p.Store.ListHistory(ctx, collection, job, f)
}

// TestStats runs jobs, then asks for the aggregates both from a Scheduler
// over the memory store, which is a StatsReader, and from one over the
// same store without the capability, which computes them from the
// listings: both must give the expected answers.
func TestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			if !strings.Contains(req.Action.Request.URI, "/bad") {
				time.Sleep(time.Second)
				return nil
			}
			time.Sleep(2 * time.Second)
			if req.ErrorAction {
				return nil
			}
			return errors.New("boom")
		}
		plain := &countingStore{Store: e.store}
		fallback, err := scheduler.New(plain, &e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := scheduler.Store(plain).(scheduler.StatsReader); ok {
			t.Fatal("countingStore is a StatsReader; the test would not use the fallback")
		}
		both := []struct {
			name string
			s    *scheduler.Scheduler
		}{{"StatsReader", e.s}, {"fallback", fallback}}

		if _, err := e.s.PutCollection(ctx, "d", nil, nil); err != nil {
			t.Fatal(err)
		}
		e.put("ok", jobJSON(time.Time{}, `"recurrence": {"frequency": "Minute", "interval": 1, "count": 3}`))
		e.put("bad", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/bad", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2},
			"errorAction": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/bad", "method": "POST"}}}}`)
		e.put("off", `{"action": `+hello+`}, "state": "Disabled"}`)
		job, err := scheduler.ParseJob([]byte(jobJSON(e.t0.Add(time.Hour), "")), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.PutJob(ctx, "d", "later", job, nil); err != nil {
			t.Fatal(err)
		}
		// A job due now in a Disabled collection is not in the backlog.
		if _, err := e.s.PutCollection(ctx, "x", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{State: scheduler.CollectionDisabled}}, nil); err != nil {
			t.Fatal(err)
		}
		if job, err = scheduler.ParseJob([]byte(jobJSON(time.Time{}, "")), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.PutJob(ctx, "x", "now", job, nil); err != nil {
			t.Fatal(err)
		}

		jc := func(c string, st scheduler.JobState, n int) scheduler.JobCount {
			return scheduler.JobCount{Collection: c, State: st, Jobs: n}
		}
		checkJobs := func(when string, want ...scheduler.JobCount) {
			t.Helper()
			for _, b := range both {
				got, err := b.s.JobCounts(ctx)
				if err != nil {
					t.Fatalf("%s: JobCounts (%s): %v", when, b.name, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: JobCounts (%s) (-want +got):\n%s", when, b.name, diff)
				}
			}
		}
		checkDue := func(when string, want int) {
			t.Helper()
			for _, b := range both {
				if got, err := b.s.DueCount(ctx); err != nil || got != want {
					t.Errorf("%s: DueCount (%s) = %d, %v; want %d", when, b.name, got, err, want)
				}
			}
		}

		// Before Start, ok and bad are due: the backlog.
		checkJobs("before Start", jc("c", "Disabled", 1), jc("c", "Enabled", 2), jc("d", "Enabled", 1), jc("x", "Enabled", 1))
		checkDue("before Start", 2)

		e.start()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		checkJobs("after the runs", jc("c", "Completed", 1), jc("c", "Disabled", 1), jc("c", "Faulted", 1), jc("d", "Enabled", 1), jc("x", "Enabled", 1))
		checkDue("after the runs", 0)

		const (
			main, errA   = scheduler.MainAction, scheduler.ErrorAction
			done, failed = scheduler.StatusCompleted, scheduler.StatusFailed
			minute       = time.Minute
		)
		hc := func(start time.Duration, a scheduler.ActionName, st scheduler.ExecutionStatus, n int) scheduler.HistoryCount {
			return scheduler.HistoryCount{Start: e.t0.Add(start).UTC(), ActionName: a, Status: st, Entries: n}
		}
		// ok ends at 1s, 61s and 121s; bad's attempts at 2s, 24s and 46s
		// (two retries, the last faulted), its error action at 48s.
		badFailures := hc(0, main, failed, 3)
		badFailures.Retries, badFailures.Faulted = 2, 1
		wantCounts := []scheduler.HistoryCount{
			hc(0, errA, done, 1), hc(0, main, done, 1), badFailures,
			hc(minute, main, done, 1), hc(2*minute, main, done, 1),
		}
		from := e.t0.In(time.FixedZone("UTC+1", 3600))
		for _, b := range both {
			got, err := b.s.HistoryCounts(ctx, from, e.t0.Add(5*minute), minute, nil)
			if err != nil {
				t.Fatalf("HistoryCounts (%s): %v", b.name, err)
			}
			if diff := cmp.Diff(wantCounts, got); diff != "" {
				t.Errorf("HistoryCounts (%s) (-want +got):\n%s", b.name, diff)
			}
			for _, tt := range []struct {
				colls []string
				want  []scheduler.HistoryCount
			}{{[]string{"c", "x"}, wantCounts}, {[]string{"d"}, nil}, {[]string{}, nil}} {
				got, err := b.s.HistoryCounts(ctx, from, e.t0.Add(5*minute), minute, &scheduler.HistoryCountsOptions{Collections: tt.colls})
				if err != nil {
					t.Fatalf("HistoryCounts(%q) (%s): %v", tt.colls, b.name, err)
				}
				if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("HistoryCounts(%q) (%s) (-want +got):\n%s", tt.colls, b.name, diff)
				}
			}
			for _, c := range got {
				if c.Start.Location() != time.UTC {
					t.Errorf("HistoryCounts (%s): start %v not in UTC", b.name, c.Start)
				}
			}
			// A range that ends at bad's last failure leaves it out.
			got, err = b.s.HistoryCounts(ctx, e.t0, e.t0.Add(46*time.Second), 23*time.Second, nil)
			if err != nil {
				t.Fatalf("HistoryCounts (%s): %v", b.name, err)
			}
			retry := hc(23*time.Second, main, failed, 1)
			retry.Retries = 1
			want := []scheduler.HistoryCount{hc(0, main, done, 1), hc(0, main, failed, 1), retry}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("HistoryCounts to 46s (%s) (-want +got):\n%s", b.name, diff)
			}
		}

		type line struct {
			Job    string
			Action scheduler.ActionName
			Status scheduler.ExecutionStatus
			End    time.Duration
		}
		all := []line{
			{"ok", main, done, 121 * time.Second}, {"ok", main, done, 61 * time.Second}, {"bad", errA, done, 48 * time.Second},
			{"bad", main, failed, 46 * time.Second}, {"bad", main, failed, 24 * time.Second}, {"bad", main, failed, 2 * time.Second},
			{"ok", main, done, time.Second},
		}
		for _, tt := range []struct {
			opts *scheduler.ListHistoryOptions
			want []line
		}{
			{nil, all},
			{&scheduler.ListHistoryOptions{Top: 2, Skip: 1}, all[1:3]},
			{&scheduler.ListHistoryOptions{Status: failed, Skip: 1}, all[4:6]},
			{&scheduler.ListHistoryOptions{Status: done, Top: 3}, []line{all[0], all[1], all[2]}},
			{&scheduler.ListHistoryOptions{Skip: 7}, nil},
			{&scheduler.ListHistoryOptions{Faulted: true}, all[3:4]},
			{&scheduler.ListHistoryOptions{Collections: []string{"d", "c"}, Top: 2}, all[:2]},
			{&scheduler.ListHistoryOptions{Collections: []string{"d"}}, nil},
			{&scheduler.ListHistoryOptions{Collections: []string{}}, nil},
		} {
			for _, b := range both {
				h, err := b.s.RecentHistory(ctx, tt.opts)
				if err != nil {
					t.Fatalf("RecentHistory(%+v) (%s): %v", tt.opts, b.name, err)
				}
				var got []line
				for _, x := range h {
					got = append(got, line{x.Job, x.ActionName, x.Status, x.EndTime.Sub(e.t0)})
				}
				if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("RecentHistory(%+v) (%s) (-want +got):\n%s", tt.opts, b.name, diff)
				}
			}
		}
		if plain.historyCalls.Load() == 0 {
			t.Errorf("the fallback never listed history")
		}

		e.stop()
		for _, b := range both {
			_, err1 := b.s.JobCounts(ctx)
			_, err2 := b.s.DueCount(ctx)
			_, err3 := b.s.HistoryCounts(ctx, e.t0, e.t0.Add(minute), minute, nil)
			_, err4 := b.s.RecentHistory(ctx, nil)
			if b.s == fallback {
				break // never started nor stopped
			}
			for i, err := range []error{err1, err2, err3, err4} {
				if !errors.Is(err, scheduler.ErrStopped) {
					t.Errorf("method %d after Stop: %v, want ErrStopped", i, err)
				}
			}
		}
	})
}

func TestStatsArguments(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, scheduler.Config{})
	t0 := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		from, to time.Time
		step     time.Duration
		want     []string // in the error text
	}{
		{"empty range", t0, t0, time.Minute, []string{"to: ", "is not after from"}},
		{"reversed range", t0, t0.Add(-time.Hour), time.Minute, []string{"to: ", "is not after from"}},
		{"zero step", t0, t0.Add(time.Hour), 0, []string{"step: ", "is not positive"}},
		{"negative step and empty range", t0, t0, -time.Second, []string{"step: ", "to: "}},
		{"too many buckets", t0, t0.Add(time.Hour), 359 * time.Millisecond, []string{"step: ", "10028 buckets, more than 10000"}},
		{"zero from", time.Time{}, t0, time.Hour, []string{"from: ", "outside the years 1678 to 2262"}},
		{"to too late", t0, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), 24 * time.Hour, []string{"to: ", "outside the years"}},
		{"range too wide", time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), 24 * 365 * time.Hour, []string{"to: ", "292 years"}},
	} {
		_, err := e.s.HistoryCounts(ctx, tt.from, tt.to, tt.step, nil)
		if !errors.Is(err, scheduler.ErrInvalid) {
			t.Errorf("HistoryCounts(%s) error %v, want one matching ErrInvalid", tt.name, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("HistoryCounts(%s) error %q, want it to say %q", tt.name, err, w)
			}
		}
	}
	if _, err := e.s.HistoryCounts(ctx, t0, t0.Add(time.Hour), 360*time.Millisecond, nil); err != nil {
		t.Errorf("HistoryCounts(exactly 10000 buckets): %v", err)
	}
	for _, tt := range []struct {
		opts scheduler.ListHistoryOptions
		want string
	}{
		{scheduler.ListHistoryOptions{Top: 101}, "top: 101 is out of range (1-100)"},
		{scheduler.ListHistoryOptions{Skip: -1}, "skip: -1 is negative"},
		{scheduler.ListHistoryOptions{Status: "Done"}, `status: "Done" is not an execution status (Completed, Failed, Postponed or Skipped)`},
		{scheduler.ListHistoryOptions{Faulted: true, NotFaulted: true}, "notFaulted: true contradicts faulted"},
	} {
		_, err := e.s.RecentHistory(ctx, &tt.opts)
		if !errors.Is(err, scheduler.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("RecentHistory(%+v) error %v, want one matching ErrInvalid that says %q", tt.opts, err, tt.want)
		}
	}
}
