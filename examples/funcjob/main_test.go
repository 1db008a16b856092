package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/schedulertest"
)

// syncBuffer is the program's output, written from the scheduler's
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimSpace(b.b.String()), "\n")
}

// TestRestartKeepsItsPlace runs the program for three minutes (fake
// time), stops it for five, and starts it again: the job is not replaced,
// the missed minutes run once (the others on record as Skipped), and the
// occurrences are numbered on.
func TestRestartKeepsItsPlace(t *testing.T) {
	db := filepath.Join(t.TempDir(), "funcjob.db")
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var out syncBuffer
		t0 := time.Now()

		s, st, err := start(ctx, db, &out)
		if err != nil {
			t.Fatal(err)
		}
		h := schedulertest.Wrap(t, s)
		h.Timeout = 10 * time.Minute
		first := h.WaitRuns(scheduler.DefaultCollection, "minutely", 3)
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		st.Close()

		time.Sleep(5 * time.Minute) // down for five minutes, from just after 2m
		restart := time.Now()

		s, st, err = start(ctx, db, &out)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		defer s.Stop(ctx)
		h = schedulertest.Wrap(t, s)
		h.Timeout = 10 * time.Minute
		second := h.WaitRuns(scheduler.DefaultCollection, "minutely", 6)
		if second != nil && first != nil && second.Created != first.Created {
			t.Errorf("the job was created again at %v (first at %v); want it kept", second.Created, first.Created)
		}
		m := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
		ok := scheduler.StatusCompleted
		h.AssertHistory(scheduler.DefaultCollection, "minutely", []schedulertest.Entry{
			{Action: scheduler.MainAction, Status: ok, Repeat: 1, Expected: m(0), Start: m(0)},
			{Action: scheduler.MainAction, Status: ok, Repeat: 2, Expected: m(1), Start: m(1)},
			{Action: scheduler.MainAction, Status: ok, Repeat: 3, Expected: m(2), Start: m(2)},
			// The minutes missed: 4 to 7 on record as Skipped, the run for them as the occurrence of 3.
			{Action: scheduler.MainAction, Status: scheduler.StatusSkipped, Expected: m(4), Start: restart},
			{Action: scheduler.MainAction, Status: ok, Repeat: 4, Expected: m(3), Start: restart},
			{Action: scheduler.MainAction, Status: ok, Repeat: 5, Expected: m(8), Start: m(8)},
			{Action: scheduler.MainAction, Status: ok, Repeat: 6, Expected: m(9), Start: m(9)},
		}, cmpopts.IgnoreFields(schedulertest.Entry{}, "Message"))
		// The run for the missed minutes comes at the restart, just after 7m.
		want := []string{"report for ops at 00:00", "report for ops at 00:01", "report for ops at 00:02",
			"report for ops at 00:07", "report for ops at 00:08", "report for ops at 00:09"}
		if diff := cmp.Diff(want, out.lines()); diff != "" {
			t.Errorf("output (-want +got):\n%s", diff)
		}
	})
}

// TestRun runs main's loop until its context ends.
func TestRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "funcjob.db")
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		var out syncBuffer
		if err := run(ctx, db, &out); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"report for ops at 00:00", "report for ops at 00:01"}, out.lines()); diff != "" {
			t.Errorf("output (-want +got):\n%s", diff)
		}
	})
}
