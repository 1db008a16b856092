package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gatedCollections is a store whose GetCollection counts its calls and
// answers col; the call numbered hold (from 1) waits for open first, or
// for its context when ignoreCtx is false, and then fails with fail when
// that is set.
type gatedCollections struct {
	nopStore
	hold      int
	open      chan struct{}
	fail      error
	ignoreCtx bool

	mu    sync.Mutex
	calls int
	col   CollectionRecord
}

func (g *gatedCollections) GetCollection(ctx context.Context, name string) (*CollectionRecord, error) {
	g.mu.Lock()
	g.calls++
	n, col := g.calls, g.col
	g.mu.Unlock()
	if n == g.hold {
		if g.ignoreCtx {
			<-g.open
		} else {
			select {
			case <-g.open:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if g.fail != nil {
			return nil, g.fail
		}
	}
	col.Name = name
	col.Definition = *col.Definition.Clone()
	return &col, nil
}

func (g *gatedCollections) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

// setLimits makes the collection the store answers have limits of n at
// once, a write of it (its Version one higher).
func (g *gatedCollections) setLimits(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.col.Definition.Properties.Limits = []Limit{{Key: LimitCollection, MaxConcurrent: n}}
	g.col.Version++
}

func newGated(t *testing.T, g *gatedCollections) *Scheduler {
	t.Helper()
	s, err := New(g, &Config{Logger: slog.New(slog.DiscardHandler), LeaseDuration: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// limitsSeen is what one caller of policyCache.limits got.
type limitsSeen struct {
	Limits []Limit
	Known  bool
}

// limitsOf calls s's policyCache.limits for collection "c" at now from n
// goroutines at once, and returns what each got once all have returned.
func limitsOf(s *Scheduler, n int, now time.Time) func() []limitsSeen {
	got := make([]limitsSeen, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			l, known := s.policies.limits(s, "c", now)
			got[i] = limitsSeen{l, known}
		})
	}
	return func() []limitsSeen {
		wg.Wait()
		return got
	}
}

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestPolicyReadOnceForMissing: workers that find a collection not read
// yet while one of them reads it wait for that read and take its result:
// the store is read once.
func TestPolicyReadOnceForMissing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 8
		g := &gatedCollections{hold: 1, open: make(chan struct{})}
		g.setLimits(3)
		s := newGated(t, g)
		got := limitsOf(s, n, time.Now())
		synctest.Wait()
		if c := g.count(); c != 1 {
			t.Errorf("%d limits of a collection not read yet, while the first read waits: %d reads, want 1", n, c)
		}
		close(g.open)
		want := repeat(limitsSeen{[]Limit{{Key: LimitCollection, MaxConcurrent: 3}}, true}, n)
		if diff := cmp.Diff(want, got()); diff != "" {
			t.Errorf("limits (-want +got):\n%s", diff)
		}
		if c := g.count(); c != 1 {
			t.Errorf("after the read: %d reads, want 1", c)
		}
	})
}

// TestPolicyReadFailed: when the read that workers wait for fails, each
// of them takes the failure's result and nothing is cached: the next
// caller reads again. With no entry that is noPolicy (the limits are not
// known, so no attempt runs unlimited); with a stale one, the stale
// entry, limits known.
func TestPolicyReadFailed(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stale bool
		want  limitsSeen
	}{
		{"missing", false, limitsSeen{nil, false}},
		{"stale", true, limitsSeen{[]Limit{{Key: LimitCollection, MaxConcurrent: 3}}, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 8
				g := &gatedCollections{hold: 1, open: make(chan struct{}), fail: errors.New("store away")}
				g.setLimits(3)
				s := newGated(t, g)
				now := time.Now()
				if tt.stale {
					g.hold = 2
					s.policies.limits(s, "c", now)
					now = now.Add(policyTTL)
				}
				before := g.count()
				got := limitsOf(s, n, now)
				synctest.Wait()
				close(g.open)
				if diff := cmp.Diff(repeat(tt.want, n), got()); diff != "" {
					t.Errorf("limits after a failed read (-want +got):\n%s", diff)
				}
				if c := g.count() - before; c != 1 {
					t.Errorf("%d limits while one read fails: %d reads, want 1", n, c)
				}
				if l, known := s.policies.limits(s, "c", now); !known || len(l) != 1 {
					t.Errorf("limits after the failure = %v, %t; want the collection's, known", l, known)
				}
				if c := g.count() - before; c != 2 {
					t.Errorf("the next caller after the failure: %d reads since, want 2", c)
				}
			})
		})
	}
}

// TestPolicyReadStale: workers that find a collection's entry stale
// while one of them reads it again use the stale entry meanwhile: the
// store is read once, and only the reader waits.
func TestPolicyReadStale(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 8
		g := &gatedCollections{hold: 2, open: make(chan struct{})}
		g.setLimits(3)
		s := newGated(t, g)
		now := time.Now()
		s.policies.limits(s, "c", now)
		g.setLimits(5)
		now = now.Add(policyTTL)
		var wg sync.WaitGroup
		got := make(chan limitsSeen, n)
		for range n {
			wg.Go(func() {
				l, known := s.policies.limits(s, "c", now)
				got <- limitsSeen{l, known}
			})
		}
		synctest.Wait()
		if c := g.count(); c != 2 {
			t.Errorf("%d limits of a stale entry while it is read again: %d reads in all, want 2", n, c)
		}
		var early []limitsSeen
		for range n - 1 {
			select {
			case l := <-got:
				early = append(early, l)
			default:
			}
		}
		stale := limitsSeen{[]Limit{{Key: LimitCollection, MaxConcurrent: 3}}, true}
		if diff := cmp.Diff(repeat(stale, n-1), early); diff != "" {
			t.Errorf("limits of the callers that did not read, while the read waits (-want +got):\n%s", diff)
		}
		close(g.open)
		wg.Wait()
		if diff := cmp.Diff(limitsSeen{[]Limit{{Key: LimitCollection, MaxConcurrent: 5}}, true}, <-got); diff != "" {
			t.Errorf("limits of the reader (-want +got):\n%s", diff)
		}
		if l, _ := s.policies.limits(s, "c", now); len(l) != 1 || l[0].MaxConcurrent != 5 {
			t.Errorf("limits after the read = %v, want at most 5 at once", l)
		}
		if c := g.count(); c != 2 {
			t.Errorf("after the read: %d reads in all, want 2", c)
		}
	})
}

// TestPolicyRefreshSharesRead: refresh shares a read in flight begun at
// its now, and reads after one begun earlier, which may not see what it
// must.
func TestPolicyRefreshSharesRead(t *testing.T) {
	for _, tt := range []struct {
		name  string
		later time.Duration // refresh's now after the read in flight's
		reads int           // in all: the first, the one in flight, refresh's
	}{
		{"same instant", 0, 2},
		{"later", time.Millisecond, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := &gatedCollections{hold: 2, open: make(chan struct{})}
				s := newGated(t, g)
				now := time.Now()
				s.policies.get(s, "c", now)
				now = now.Add(policyTTL)
				var wg sync.WaitGroup
				wg.Go(func() { s.policies.get(s, "c", now) })
				synctest.Wait()
				var did bool
				wg.Go(func() { did = s.policies.refresh(s, "c", now.Add(tt.later)) })
				synctest.Wait()
				if c := g.count(); c != 2 {
					t.Errorf("refresh while a read is in flight: %d reads in all before that read ends, want 2", c)
				}
				close(g.open)
				wg.Wait()
				if !did {
					t.Error("refresh = false, want true")
				}
				if c := g.count(); c != tt.reads {
					t.Errorf("%d reads in all, want %d", c, tt.reads)
				}
			})
		})
	}
}

// TestPolicyReadHangs: a read the store does not answer ends a third of
// LeaseDuration after it began, and so does the wait of those that wait
// for it, even when the store ignores its context: the limits are then
// not known, and no worker is held up for good. A caller that comes
// after that bound reads again, even while the store still holds the
// first read, and gets the limits.
func TestPolicyReadHangs(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(map[bool]string{false: "store heeds context", true: "store ignores context"}[ignore], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 8
				g := &gatedCollections{hold: 1, open: make(chan struct{}), ignoreCtx: ignore}
				s := newGated(t, g)
				start := time.Now()
				var wg sync.WaitGroup
				var mu sync.Mutex
				var returned int
				for i := range n {
					wg.Go(func() {
						if i > 0 {
							time.Sleep(time.Millisecond) // the reader goes first
						}
						_, known := s.policies.limits(s, "c", start)
						if i == 0 && ignore {
							return // it answers once the store does
						}
						if known {
							t.Error("limits known, want not known: the store never answered")
						}
						if d := time.Since(start); d > s.cfg.LeaseDuration/3 {
							t.Errorf("limits returned %v after the read began, want within a third of LeaseDuration", d)
						}
						mu.Lock()
						returned++
						mu.Unlock()
					})
				}
				time.Sleep(s.cfg.LeaseDuration / 3)
				synctest.Wait()
				mu.Lock()
				want := n
				if ignore {
					want = n - 1 // the reader waits for the store
				}
				if returned != want {
					t.Errorf("%d callers returned, want %d", returned, want)
				}
				mu.Unlock()
				if c := g.count(); c != 1 {
					t.Errorf("%d reads within the bound, want 1", c)
				}
				g.setLimits(3)
				if l, known := s.policies.limits(s, "c", time.Now()); !known || len(l) != 1 {
					t.Errorf("limits of a caller after the bound = %v, %t; want the collection's, known", l, known)
				}
				if c := g.count(); c != 2 {
					t.Errorf("%d reads after a caller came after the bound, want 2", c)
				}
				close(g.open)
				wg.Wait()
			})
		})
	}
}

const (
	calNothing  = `{"properties": {"dates": ["2020-01-01"]}}`
	calWeekends = `{"properties": {"rules": [{"frequency": "Week", "schedule": {"weekDays": ["Saturday", "Sunday"]}}]}}`
)

func jan2026(day, hour int) time.Time { return time.Date(2026, 1, day, hour, 0, 0, 0, time.UTC) }

// calCollection is collection "c" with calendar "cal" as cal (ETag etag).
func calCollection(t testing.TB, cal, etag string) CollectionRecord {
	t.Helper()
	c, err := ParseCalendar([]byte(cal))
	if err != nil {
		t.Fatal(err)
	}
	var col CollectionRecord
	col.Name = "c"
	col.Definition.Calendars = map[string]*CalendarEntry{"cal": {ETag: etag, Calendar: *c}}
	return col
}

// weeklyCalendarJob is a job of "c" every Saturday at 09:00 under
// calendar "cal", moved to the next included day when excluded, whose
// next occurrence another instance planned under the weekends calendar:
// Saturday the 17th moved to Monday the 19th. It is due at
// jan2026(19, 9).
func weeklyCalendarJob(t testing.TB) *JobRecord {
	t.Helper()
	job, err := ParseJob([]byte(`{"startTime": "2026-01-03T09:00:00Z", "action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Saturday"], "hours": [9], "minutes": [0]}, "calendar": "cal", "onExcluded": "NextIncluded"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &JobRecord{Collection: "c", Name: "j", ETag: `"e1"`, Job: job, State: JobEnabled,
		Schedule: JobSchedule{Anchor: jan2026(1, 0), NextOccurrence: jan2026(19, 9)}}
}

// TestPolicyRefreshAfterStaleUse replays, step by step, what timingIn
// does when its calendar came from a stale entry handed out while another
// worker's read (begun with a later now) was in flight, and that read
// ends between timingIn's calendar and its refresh: refresh finds an
// entry read after its now, which is not the one timingIn used, and must
// still have timingIn look again, or the step plans the job back under
// the older version of the calendar.
func TestPolicyRefreshAfterStaleUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gatedCollections{hold: 1, open: make(chan struct{})}
		g.col = calCollection(t, calWeekends, `"v2"`) // what the store holds now
		s := newGated(t, g)
		r := weeklyCalendarJob(t)
		nowW := jan2026(19, 9).Add(time.Second) // the worker W's now
		v1 := calCollection(t, calNothing, `"v1"`)
		s.policies.set(&v1, nowW.Add(-policyTTL-time.Second)) // stale at nowW

		// Worker R, whose step began 1ms after W's, reaches the cache first.
		var wg sync.WaitGroup
		wg.Go(func() { s.policies.get(s, "c", nowW.Add(time.Millisecond)) })
		synctest.Wait() // R's read is in flight

		// W: timingIn, step by step.
		excl := s.policies.calendar(s, r, "cal", nowW) // stale: R reads
		tm, err := s.timings.get(r, excl, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !planDue(r, nowW) {
			t.Fatal("not due")
		}
		at, _ := tm.Replan(r.Schedule.NextOccurrence)
		if at.Equal(r.Schedule.NextOccurrence) {
			// W read the newer calendar itself: nothing to refresh.
			close(g.open)
			wg.Wait()
			return
		}
		close(g.open) // R's read ends here, before W's refresh
		wg.Wait()
		if !s.policies.refresh(s, "c", nowW) {
			// timingIn returns tm: the step plans under the stale calendar.
			at, _ := tm.Replan(r.Schedule.NextOccurrence)
			t.Errorf("refresh = false after timingIn's calendar came from a stale entry: the step plans %v back to %v under the older calendar (store holds the newer one, read meanwhile)",
				r.Schedule.NextOccurrence, at)
		}
	})
}

// TestPolicyRefreshAfterFailedOlderRead: refresh that finds an older
// read in flight waits for it and, when that read fails, reads itself;
// when it hangs past its bound (a store that ignores its context),
// refresh reports false at that bound rather than wait again or read
// beside it.
func TestPolicyRefreshAfterFailedOlderRead(t *testing.T) {
	for _, tt := range []struct {
		name  string
		hang  bool
		want  bool
		reads int // in all: the first, the older one, refresh's
	}{
		{"failed", false, true, 3},
		{"hung", true, false, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := &gatedCollections{hold: 2, open: make(chan struct{}), ignoreCtx: tt.hang}
				if !tt.hang {
					g.fail = errors.New("store away")
				}
				g.setLimits(3)
				s := newGated(t, g)
				now := time.Now()
				s.policies.get(s, "c", now)
				now = now.Add(policyTTL)
				var wg sync.WaitGroup
				wg.Go(func() { s.policies.get(s, "c", now) }) // the older read, held
				synctest.Wait()
				did := make(chan bool, 1)
				wg.Go(func() { did <- s.policies.refresh(s, "c", now.Add(time.Millisecond)) })
				synctest.Wait()
				if !tt.hang {
					close(g.open)
				} else {
					time.Sleep(s.cfg.LeaseDuration / 3)
				}
				synctest.Wait()
				select {
				case got := <-did:
					if got != tt.want {
						t.Errorf("refresh = %t, want %t", got, tt.want)
					}
				default:
					t.Error("refresh has not returned")
				}
				if c := g.count(); c != tt.reads {
					t.Errorf("%d reads in all, want %d", c, tt.reads)
				}
				if tt.hang {
					close(g.open)
				}
				wg.Wait()
			})
		})
	}
}

// TestPolicyHungReadAnswersLate: a read replaced after its bound (see
// TestPolicyReadHangs) that the store answers at last does not set what
// it read over the entry its successor set, which is newer, nor end the
// read that replaced it.
func TestPolicyHungReadAnswersLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gatedCollections{hold: 1, open: make(chan struct{}), ignoreCtx: true}
		g.setLimits(3)
		s := newGated(t, g)
		var wg sync.WaitGroup
		wg.Go(func() { s.policies.limits(s, "c", time.Now()) }) // answered with 3, late
		synctest.Wait()
		time.Sleep(s.cfg.LeaseDuration / 3)
		synctest.Wait()
		g.setLimits(5)
		if l, known := s.policies.limits(s, "c", time.Now()); !known || len(l) != 1 || l[0].MaxConcurrent != 5 {
			t.Errorf("limits after the bound = %v, %t; want at most 5, known", l, known)
		}
		close(g.open)
		wg.Wait()
		if l, _ := s.policies.limits(s, "c", time.Now()); len(l) != 1 || l[0].MaxConcurrent != 5 {
			t.Errorf("limits after the late answer = %v, want at most 5 at once", l)
		}
		if c := g.count(); c != 2 {
			t.Errorf("%d reads, want 2", c)
		}
	})
}

// TestPolicyWriteNotOverwrittenByOlderRead: this instance writes a
// collection (the cache takes the write at once) while a read of it,
// begun before the write, is in flight; that read, ending after, does not
// set what it read, the version before the write, over the write's entry.
func TestPolicyWriteNotOverwrittenByOlderRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gatedCollections{hold: 2, open: make(chan struct{})}
		g.setLimits(3)
		s := newGated(t, g)
		now := time.Now()
		s.policies.get(s, "c", now)
		now = now.Add(policyTTL)
		var wg sync.WaitGroup
		wg.Go(func() { s.policies.get(s, "c", now) }) // reads the version with limit 3, held
		synctest.Wait()
		// A write through this instance: the store, then the cache.
		g.setLimits(5)
		written := CollectionRecord{Name: "c", Version: 1}
		written.Definition.Properties.Limits = []Limit{{Key: LimitCollection, MaxConcurrent: 5}}
		s.wroteCollection(&written, now.Add(time.Millisecond))
		close(g.open)
		wg.Wait()
		if l, _ := s.policies.limits(s, "c", now.Add(2*time.Millisecond)); len(l) != 1 || l[0].MaxConcurrent != 5 {
			t.Errorf("limits after this instance wrote 5 = %v, want at most 5 at once", l)
		}
	})
}
