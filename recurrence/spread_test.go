package recurrence_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// hourlyWindow is "0 * * * *" spread over 15 minutes.
func hourlyWindow() *recurrence.Recurrence {
	return &recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Minutes: []int{0}},
		Extensions: &recurrence.Extensions{Window: retry.Duration(15 * time.Minute)}}
}

// fnvOffset is the documented offset, computed with hash/fnv: FNV-1a of
// collection, 0, job and 0, XOR the scheduled second, mixed by
// MurmurHash3's fmix64, modulo the span in seconds.
func fnvOffset(collection, job string, scheduled time.Time, span time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(collection + "\x00" + job + "\x00"))
	x := h.Sum64() ^ uint64(scheduled.Unix())
	x = (x ^ x>>33) * 0xff51afd7ed558ccd
	x = (x ^ x>>33) * 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return time.Duration(x%uint64(span/time.Second)) * time.Second
}

// TestWindowPinned pins the planned instants of three jobs: a change of
// the hash or of what it hashes moves every spread job, on every instance
// at once, and must show here.
func TestWindowPinned(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		collection, job string
		want            []string
	}{
		{"reports", "nightly", []string{"2026-01-01T00:07:55Z", "2026-01-01T01:02:28Z", "2026-01-01T02:12:27Z"}},
		{"reports", "hourly", []string{"2026-01-01T00:08:57Z", "2026-01-01T01:01:03Z", "2026-01-01T02:12:07Z"}},
		{"billing", "nightly", []string{"2026-01-01T00:04:36Z", "2026-01-01T01:03:43Z", "2026-01-01T02:14:00Z"}},
	}
	for _, tt := range tests {
		rule, err := recurrence.CompileJob(hourlyWindow(), start, tt.collection, tt.job)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		at := start.Add(-time.Nanosecond)
		for range 3 {
			at = rule.Next(at)
			got = append(got, at.UTC().Format(time.RFC3339))
			s := rule.Scheduled(at)
			if s.Minute() != 0 || s.Second() != 0 {
				t.Errorf("%s/%s: Scheduled(%v) = %v, want a whole hour", tt.collection, tt.job, at, s)
			}
			if want := s.Add(fnvOffset(tt.collection, tt.job, s, 15*time.Minute)); !at.Equal(want) {
				t.Errorf("%s/%s: planned %v, want %v (hash/fnv)", tt.collection, tt.job, at, want)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s/%s: planned instants (-want +got):\n%s", tt.collection, tt.job, diff)
		}
	}
}

// TestWindowKeepsOrder walks schedules whose occurrences lie closer than
// the window in places: each planned instant lies in [scheduled,
// scheduled + window), before the next scheduled instant, and the
// scheduled instants behind them are the rule's without a window.
func TestWindowKeepsOrder(t *testing.T) {
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		rec  *recurrence.Recurrence
	}{
		{"minutes 0 and 5, window 10 minutes", &recurrence.Recurrence{Frequency: recurrence.Hour,
			Schedule: &recurrence.Schedule{Minutes: []int{0, 5}}, Extensions: &recurrence.Extensions{Window: retry.Duration(10 * time.Minute)}}},
		{"every 10 seconds, window 9 seconds", &recurrence.Recurrence{Frequency: recurrence.Second, Interval: 10,
			Extensions: &recurrence.Extensions{Window: retry.Duration(9 * time.Second)}}},
		{"daily in New York across spring forward, window 23 hours", &recurrence.Recurrence{Frequency: recurrence.Day,
			Schedule: &recurrence.Schedule{Hours: []int{2}, Minutes: []int{30}}, TimeZone: "America/New_York",
			Extensions: &recurrence.Extensions{Window: retry.Duration(23 * time.Hour)}}},
		{"cron every 15 minutes, window 14 minutes", &recurrence.Recurrence{Cron: "*/15 * * * *", TimeZone: "Europe/Berlin",
			Extensions: &recurrence.Extensions{Window: retry.Duration(14 * time.Minute)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spread, err := recurrence.CompileJob(tt.rec, start, "c", "j")
			if err != nil {
				t.Fatal(err)
			}
			plain := *tt.rec
			plain.Extensions = nil
			rule, err := recurrence.Compile(&plain, start)
			if err != nil {
				t.Fatal(err)
			}
			w := time.Duration(tt.rec.Window)
			var prev time.Time
			moved := 0
			s := rule.Next(start.Add(-time.Nanosecond))
			p := spread.Next(start.Add(-time.Nanosecond))
			for range 2000 {
				next := rule.Next(s)
				if got := spread.Scheduled(p); !got.Equal(s) {
					t.Fatalf("Scheduled(%v) = %v, want %v", p, got, s)
				}
				if off := p.Sub(s); off < 0 || off >= w || !p.Before(next) {
					t.Fatalf("planned %v for scheduled %v: offset %v not in [0, %v) or not before the next scheduled %v", p, s, off, w, next)
				}
				if !p.After(prev) {
					t.Fatalf("planned %v after %v: out of order", p, prev)
				}
				if p.After(s) {
					moved++
				}
				prev, s, p = p, next, spread.Next(p)
			}
			if moved < 1000 {
				t.Errorf("%d of 2000 occurrences moved by their offset", moved)
			}
		})
	}
}

// TestWindowDST spreads a daily 01:30 over two hours across both changes
// of New York's clocks: offsets are elapsed time, so a planned instant
// lies less than two hours after its scheduled one even where the wall
// clock repeats an hour or skips one.
func TestWindowDST(t *testing.T) {
	rec := &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: []int{1}, Minutes: []int{30}},
		TimeZone: "America/New_York", Extensions: &recurrence.Extensions{Window: retry.Duration(2 * time.Hour)}}
	ny, _ := time.LoadLocation("America/New_York")
	tests := []struct {
		name, job       string
		after           time.Time
		scheduled, want string // UTC
		wall            string // the planned instant in New York
	}{
		// 1 Nov 2026: 01:30 EDT runs once (its hour is fixed); 38
		// minutes of offset land in the repeated hour, at 01:08 EST.
		{"clocks go back", "d", time.Date(2026, 11, 1, 0, 0, 0, 0, ny), "2026-11-01T05:30:00Z", "2026-11-01T06:08:29Z", "01:08:29 EST"},
		// 8 Mar 2026: 43 minutes after 01:30 EST the wall clock reads
		// 03:13 EDT (02:00 to 03:00 does not exist); the window, two
		// hours of elapsed time, ends at 04:30 EDT.
		{"clocks go forward", "d", time.Date(2026, 3, 8, 0, 0, 0, 0, ny), "2026-03-08T06:30:00Z", "2026-03-08T07:13:07Z", "03:13:07 EDT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule, err := recurrence.CompileJob(rec, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "dst", tt.job)
			if err != nil {
				t.Fatal(err)
			}
			p := rule.Next(tt.after)
			s := rule.Scheduled(p)
			if got := s.UTC().Format(time.RFC3339); got != tt.scheduled {
				t.Errorf("Scheduled(%v) = %s, want %s", p, got, tt.scheduled)
			}
			if got := p.UTC().Format(time.RFC3339); got != tt.want {
				t.Errorf("Next(%v) = %s, want %s", tt.after, got, tt.want)
			}
			if got := p.In(ny).Format("15:04:05 MST"); got != tt.wall {
				t.Errorf("Next(%v) in New York = %s, want %s", tt.after, got, tt.wall)
			}
			if off := p.Sub(s); off != fnvOffset("dst", tt.job, s, 2*time.Hour) {
				t.Errorf("offset %v, want %v", off, fnvOffset("dst", tt.job, s, 2*time.Hour))
			}
		})
	}
}

// TestWindowEndTime: endTime applies to planned instants, so an
// occurrence scheduled before endTime whose offset carries it past
// endTime does not run.
func TestWindowEndTime(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := hourlyWindow()
	first, err := recurrence.CompileJob(rec, start, "reports", "nightly") // planned 00:07:55
	if err != nil {
		t.Fatal(err)
	}
	p := first.Next(start.Add(-time.Nanosecond))
	for _, tt := range []struct {
		end  time.Time
		want time.Time
	}{
		{p, p},
		{p.Add(-time.Second), time.Time{}},
	} {
		rec.EndTime = &tt.end
		rule, err := recurrence.CompileJob(rec, start, "reports", "nightly")
		if err != nil {
			t.Fatal(err)
		}
		if got := rule.Next(start.Add(-time.Nanosecond)); !got.Equal(tt.want) {
			t.Errorf("endTime %v: Next = %v, want %v", tt.end, got, tt.want)
		}
	}
}

func TestWindowValidate(t *testing.T) {
	tests := []struct {
		name string
		rec  *recurrence.Recurrence
		want string // the error, "" for none
	}{
		{"shorter than the interval", hourlyWindow(), ""},
		{"as long as the interval", &recurrence.Recurrence{Frequency: recurrence.Hour, Extensions: &recurrence.Extensions{Window: retry.Duration(time.Hour)}},
			`window: "PT1H" is not shorter than the recurrence's interval (PT1H)`},
		{"interval counts", &recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 30, Extensions: &recurrence.Extensions{Window: retry.Duration(45 * time.Minute)}},
			`window: "PT45M" is not shorter than the recurrence's interval (PT30M)`},
		{"a month counts 28 days", &recurrence.Recurrence{Frequency: recurrence.Month, Extensions: &recurrence.Extensions{Window: retry.Duration(29 * 24 * time.Hour)}},
			`window: "P29D" is not shorter than the recurrence's interval (P28D)`},
		{"cron: the spec's frequency", &recurrence.Recurrence{Cron: "0 * * * *", Extensions: &recurrence.Extensions{Window: retry.Duration(time.Hour)}},
			`window: "PT1H" is not shorter than the recurrence's interval (PT1H)`},
		// Occurrences 5 minutes apart in an hourly period: offsets are
		// drawn from the 5 minutes to the next one.
		{"cron: closer than the window", &recurrence.Recurrence{Cron: "*/5 * * * *", Extensions: &recurrence.Extensions{Window: retry.Duration(10 * time.Minute)}}, ""},
		{"fraction of a second", &recurrence.Recurrence{Frequency: recurrence.Hour, Extensions: &recurrence.Extensions{Window: retry.Duration(1500 * time.Millisecond)}},
			`window: "PT1.5S" is not a whole number of seconds`},
		{"negative", &recurrence.Recurrence{Frequency: recurrence.Hour, Extensions: &recurrence.Extensions{Window: retry.Duration(-time.Minute)}},
			`window: "-PT1M" is not longer than zero`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rec.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *recurrence.FieldError
			if !errors.As(err, &fe) || fe.Path != "window" {
				t.Fatalf("Validate() = %v, want a *FieldError at window", err)
			}
			if err.Error() != tt.want {
				t.Errorf("Validate() = %q, want %q", err, tt.want)
			}
		})
	}
}

func TestWindowDescribe(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		rec  *recurrence.Recurrence
		want string
	}{
		{hourlyWindow(), "every hour on the hour, spread over 15 minutes"},
		{&recurrence.Recurrence{Frequency: recurrence.Day, Extensions: &recurrence.Extensions{Window: retry.Duration(90*time.Minute + 5*time.Second)}, Count: 3},
			"every day at 00:00 (UTC), spread over 1 hour, 30 minutes and 5 seconds, 3 times"},
	} {
		if got := tt.rec.Describe(start); got != tt.want {
			t.Errorf("Describe = %q, want %q", got, tt.want)
		}
		if !strings.Contains(tt.rec.Describe(start), "spread over") {
			t.Errorf("Describe = %q, says nothing of the window", tt.rec.Describe(start))
		}
	}
}

// TestWindowConcurrentWalks walks one spread rule from several goroutines
// at once, each from its own instant: each gets what a rule of its own
// gives (the rule remembers the last occurrence it returned, for walks).
func TestWindowConcurrentWalks(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	shared, err := recurrence.CompileJob(hourlyWindow(), start, "reports", "nightly")
	if err != nil {
		t.Fatal(err)
	}
	walk := func(rule *recurrence.Rule, from time.Time) []time.Time {
		var out []time.Time
		for at := from; len(out) < 300; {
			at = rule.Next(at)
			out = append(out, at)
		}
		return out
	}
	done := make(chan error)
	for g := range 8 {
		go func() {
			from := start.Add(time.Duration(g) * 7 * time.Hour)
			own, err := recurrence.CompileJob(hourlyWindow(), start, "reports", "nightly")
			if err != nil {
				done <- err
				return
			}
			if diff := cmp.Diff(walk(own, from), walk(shared, from)); diff != "" {
				done <- fmt.Errorf("walk from %v on the shared rule (-own +shared):\n%s", from, diff)
				return
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestWindowWalkMemory: a rule remembers the occurrence it returned last
// for the next call of a walk; calls from other instants in between (just
// before or after an occurrence, a scheduled instant, an earlier
// occurrence) get what a rule that never walked gives.
func TestWindowWalkMemory(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	compile := func() *recurrence.Rule {
		r, err := recurrence.CompileJob(hourlyWindow(), start, "reports", "nightly")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	rule := compile()
	var prev time.Time
	p := rule.Next(start)
	for range 100 {
		s := rule.Scheduled(p)
		for _, q := range []time.Time{p.Add(-time.Second), p.Add(-time.Nanosecond), p.Add(time.Nanosecond), s, prev} {
			if got, want := rule.Next(q), compile().Next(q); !got.Equal(want) {
				t.Fatalf("after a walk to %v: Next(%v) = %v, want %v", p, q, got, want)
			}
			rule.Next(p) // the walk's memory is of p's occurrence again
		}
		prev, p = p, rule.Next(p)
	}
}
