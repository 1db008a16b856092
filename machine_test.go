package scheduler

import (
	"io"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

var base = time.Date(2030, 5, 6, 7, 0, 0, 0, time.UTC)

func minuteJob(count int) *Job {
	return &Job{
		Action:     action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}},
		StartTime:  &base,
		Recurrence: &recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 1, Count: int32(count)},
	}
}

func TestMachineStep(t *testing.T) {
	m := func(p MisfirePolicy) machine {
		return machine{policy: RunPolicy{Missed: missedOf(p), Overlap: OverlapPostpone}, threshold: time.Minute}
	}
	type want struct {
		run      bool
		due      time.Time
		next     time.Time
		state    JobState
		hist     int
		waiting  bool
		expected time.Time // of the run, when run
	}
	tests := []struct {
		name  string
		m     machine
		count int
		setup func(s *JobSchedule)
		now   time.Time
		want  want
	}{
		{
			name: "first occurrence due",
			m:    m(MisfireRunOnce), now: base,
			setup: func(s *JobSchedule) { s.NextOccurrence = base },
			want:  want{run: true, due: base, next: base.Add(time.Minute), state: JobEnabled, expected: base},
		},
		{
			name: "not yet due",
			m:    m(MisfireRunOnce), now: base.Add(-time.Second),
			setup: func(s *JobSchedule) { s.NextOccurrence = base },
			want:  want{due: base, next: base, state: JobEnabled},
		},
		{
			name: "last occurrence by count",
			m:    m(MisfireRunOnce), count: 2, now: base.Add(time.Minute),
			setup: func(s *JobSchedule) { s.NextOccurrence = base.Add(time.Minute); s.Counted = 1 },
			want:  want{run: true, due: base.Add(time.Minute), state: JobEnabled, expected: base.Add(time.Minute)},
		},
		{
			name: "runOnce after downtime skips to the next after now",
			m:    m(MisfireRunOnce), now: base.Add(10*time.Minute + 30*time.Second),
			setup: func(s *JobSchedule) { s.NextOccurrence = base },
			want: want{run: true, due: base.Add(10*time.Minute + 30*time.Second), next: base.Add(11 * time.Minute),
				state: JobEnabled, expected: base, hist: 1}, // the 10 merged ones: one Skipped entry
		},
		{
			// The second missed occurrence waits (Postponed), the third
			// is next.
			name: "runAll after downtime goes one by one",
			m:    m(MisfireRunAll), now: base.Add(10*time.Minute + 30*time.Second),
			setup: func(s *JobSchedule) { s.NextOccurrence = base },
			want: want{run: true, due: base.Add(10*time.Minute + 30*time.Second), next: base.Add(2 * time.Minute), state: JobEnabled,
				expected: base, hist: 1, waiting: true},
		},
		{
			// 0m..9m are later than the threshold (one Skipped entry);
			// 10m, 30 seconds late, runs.
			name: "skip drops the late occurrences",
			m:    m(MisfireSkip), now: base.Add(10*time.Minute + 30*time.Second),
			setup: func(s *JobSchedule) { s.NextOccurrence = base },
			want: want{run: true, due: base.Add(10*time.Minute + 30*time.Second), next: base.Add(11 * time.Minute),
				state: JobEnabled, expected: base.Add(10 * time.Minute), hist: 1},
		},

		{
			name: "skip runs an occurrence within the threshold",
			m:    m(MisfireSkip), now: base.Add(30 * time.Second),
			setup: func(s *JobSchedule) { s.NextOccurrence = base },
			want:  want{run: true, due: base.Add(30 * time.Second), next: base.Add(time.Minute), state: JobEnabled, expected: base},
		},
		{
			name: "occurrence due during retry wait is postponed",
			m:    m(MisfireRunOnce), now: base.Add(time.Minute),
			setup: func(s *JobSchedule) {
				s.NextOccurrence = base.Add(time.Minute)
				s.Current = &Occurrence{Number: 1, Expected: base, Retry: 1, At: base.Add(90 * time.Second)}
				s.Occurrences, s.Counted = 1, 1
			},
			want: want{due: base.Add(90 * time.Second), next: base.Add(2 * time.Minute), state: JobEnabled, hist: 1, waiting: true},
		},
		{
			name: "no further occurrence after a failure: Faulted",
			m:    m(MisfireRunOnce), now: base,
			setup: func(s *JobSchedule) { s.LastFailed = true; s.Occurrences = 1 },
			want:  want{state: JobFaulted},
		},
		{
			name: "waiting occurrence starts when the current one is done",
			m:    m(MisfireRunOnce), now: base.Add(90 * time.Second),
			setup: func(s *JobSchedule) {
				s.NextOccurrence = base.Add(2 * time.Minute)
				s.Waiting = &Occurrence{Number: 2, Expected: base.Add(time.Minute)}
			},
			want: want{run: true, due: base.Add(90 * time.Second), next: base.Add(2 * time.Minute), state: JobEnabled, expected: base.Add(time.Minute)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &JobRecord{Collection: "c", Name: "j", Job: minuteJob(tt.count), State: JobEnabled, Schedule: JobSchedule{Anchor: base}}
			tt.setup(&r.Schedule)
			tm, err := r.Job.Timing(r.Collection, r.Name, base)
			if err != nil {
				t.Fatal(err)
			}
			run, due, hist := tt.m.step(r, tm, tt.now)
			got := want{run: due, due: r.Schedule.DueAt, next: r.Schedule.NextOccurrence, state: r.State, hist: len(hist), waiting: r.Schedule.Waiting != nil}
			if due {
				got.expected = run.Expected
			}
			if got != tt.want {
				t.Errorf("step(%v) = %+v, want %+v", tt.now, got, tt.want)
			}
		})
	}
}

func TestMachineComplete(t *testing.T) {
	fixed := func(n int) *JobRecord {
		j := minuteJob(0)
		j.Action.RetryPolicy = nil
		if n >= 0 {
			p := retryFixed(n)
			j.Action.RetryPolicy = p
		}
		return &JobRecord{Collection: "c", Name: "j", Job: j, State: JobEnabled}
	}
	end := base.Add(time.Second)
	fail := outcome{start: base, end: end, err: io.EOF, message: "eof"}
	ok := outcome{start: base, end: end}
	t.Run("failure with retries left schedules a retry", func(t *testing.T) {
		r := fixed(-1)
		o := &Occurrence{Number: 1, Tag: "t", At: base}
		r.Schedule.Current = o
		h := machine{}.complete(r, o, fail, false)
		c := r.Schedule.Current
		if h.Status != StatusFailed || c == nil || c.Retry != 1 || !c.At.Equal(end.Add(30*time.Second)) || r.Status.FailureCount != 1 || r.Status.ExecutionCount != 1 {
			t.Errorf("after a failed first attempt: entry %+v, current %+v, status %+v", h, c, r.Status)
		}
	})
	t.Run("last failure without error action ends the occurrence failed", func(t *testing.T) {
		r := fixed(0)
		o := &Occurrence{Number: 1, Tag: "t", At: base}
		r.Schedule.Current = o
		machine{}.complete(r, o, fail, false)
		if r.Schedule.Current != nil || !r.Schedule.LastFailed || r.Status.FaultedCount != 1 {
			t.Errorf("schedule %+v status %+v; want no current occurrence, LastFailed, faultedCount 1", r.Schedule, r.Status)
		}
	})
	t.Run("error action success still counts the occurrence as failed", func(t *testing.T) {
		r := fixed(0)
		ea := r.Job.Action
		ea.ErrorAction = nil
		r.Job.Action.ErrorAction = &ea
		o := &Occurrence{Number: 1, Tag: "t", At: base, ErrorAction: true}
		r.Schedule.Current = o
		h := machine{}.complete(r, o, ok, false)
		if h.ActionName != ErrorAction || r.Schedule.Current != nil || !r.Schedule.LastFailed || r.Status.ExecutionCount != 0 {
			t.Errorf("entry %+v schedule %+v status %+v", h, r.Schedule, r.Status)
		}
	})
	t.Run("outcome of a replaced occurrence only counts", func(t *testing.T) {
		r := fixed(3)
		o := &Occurrence{Number: 1, Tag: "old", At: base}
		r.Schedule.Current = &Occurrence{Number: 2, Tag: "new", At: base}
		machine{}.complete(r, o, fail, false)
		if r.Schedule.Current.Tag != "new" || r.Schedule.Current.Retry != 0 || r.Status.FailureCount != 1 {
			t.Errorf("schedule %+v status %+v", r.Schedule.Current, r.Status)
		}
	})
}

func retryFixed(n int) *retry.Policy {
	return &retry.Policy{Type: retry.Fixed, Count: &n}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"}, // é is two bytes; cutting inside it drops it
		{"héllo", 3, "hé"},
		{"日本", 4, "日"},
		{"日本", 2, ""},
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// BenchmarkStepAfterAWeek steps a minutely job that missed a week of
// occurrences (10,080) under the Skip missed policy: those older than the
// catch-up window are passed over as one Skipped entry that counts 10,000
// of them, and the two within it run once (the second merged, in an entry
// of its own).
func BenchmarkStepAfterAWeek(b *testing.B) {
	m := machine{policy: RunPolicy{Missed: MissedSkip, Overlap: OverlapPostpone}, threshold: time.Minute}
	r0 := &JobRecord{Collection: "c", Name: "j", Job: minuteJob(0), State: JobEnabled, Schedule: JobSchedule{Anchor: base, NextOccurrence: base}}
	tm, err := r0.Job.Timing(r0.Collection, r0.Name, base)
	if err != nil {
		b.Fatal(err)
	}
	now := base.Add(7 * 24 * time.Hour)
	for b.Loop() {
		r := *r0
		_, _, hist := m.step(&r, tm, now)
		if len(hist) != 2 || hist[0].Skipped != MaxSkippedCounted || hist[1].Skipped != 1 {
			b.Fatalf("history %+v, want a Skipped entry of %d older than the catch-up window, then one of the occurrence merged into the run of the first within it", hist, MaxSkippedCounted)
		}
	}
}

// TestBufferAllBound: under BufferAll at most MaxBuffered occurrences wait
// behind the one in progress; older ones are passed over.
func TestBufferAllBound(t *testing.T) {
	m := machine{policy: RunPolicy{Missed: MissedRunOnce, Overlap: OverlapBufferAll}, threshold: time.Minute}
	now := base.Add(150 * time.Minute)
	r := &JobRecord{Collection: "c", Name: "j", Job: minuteJob(0), State: JobEnabled, Schedule: JobSchedule{Anchor: base, NextOccurrence: base,
		Current: &Occurrence{Number: 1, Expected: base.Add(-time.Minute), Retry: 1, At: now.Add(time.Minute)}}}
	tm, err := r.Job.Timing(r.Collection, r.Name, base)
	if err != nil {
		t.Fatal(err)
	}
	_, due, hist := m.step(r, tm, now)
	// 151 due (0m..150m): the last 100 (51m..150m) wait, 0m..50m are skipped.
	if due || len(hist) != 1 || hist[0].Status != StatusSkipped || hist[0].Skipped != 51 || !hist[0].LastExpectedTime.Equal(base.Add(50*time.Minute)) {
		t.Fatalf("step: due %v, history %+v; want one Skipped entry of 51 occurrences, 0m to 50m", due, hist)
	}
	sc := &r.Schedule
	if !sc.NextOccurrence.Equal(base.Add(51*time.Minute)) || !sc.buffered().Equal(now) || !sc.DueAt.Equal(sc.Current.At) {
		t.Errorf("next %v, buffered %v, due %v; want 51m, now, the retry's time", sc.NextOccurrence, sc.buffered(), sc.DueAt)
	}
	// The retry succeeds: the buffered ones run one after the other,
	// whatever the missed policy, starting with 51m.
	c := *sc.Current
	m.complete(r, &c, outcome{start: now.Add(time.Minute), end: now.Add(time.Minute)}, true)
	run, due, _ := m.step(r, tm, now.Add(time.Minute))
	if !due || !run.Expected.Equal(base.Add(51*time.Minute)) || !r.Schedule.NextOccurrence.Equal(base.Add(52*time.Minute)) {
		t.Errorf("after the retry: due %v, run %v, next %v; want 51m to run and 52m next", due, run.Expected, r.Schedule.NextOccurrence)
	}
}
