package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
)

// errFull is what a store returns while its disk is full.
var errFull = errors.New("sqlite: database or disk is full")

// fullStore is a memory store whose writes of the run loop (records and
// lease extensions) fail with errFull while full is set, and whose reads
// answer, as an SQLite file that cannot grow does.
type fullStore struct {
	scheduler.Store
	full atomic.Bool
}

func (s *fullStore) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if s.full.Load() {
		return errFull
	}
	return s.Store.ExtendLease(ctx, collection, name, owner, until)
}

func (s *fullStore) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if s.full.Load() {
		return errFull
	}
	return s.Store.Record(ctx, owner, j, history)
}

// TestWritesFailingAreAnOutage: while the store's writes fail and its
// reads answer, Ready reports the outage from the first failed write (a
// lease extension) until a write succeeds again; the log says once that
// the store does not answer, not at each heartbeat, and once that it
// answers again, with the outage's length from its first failed write.
func TestWritesFailingAreAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		const lease = 30 * time.Second // longer than the outage: the attempt is not taken over
		// When the writes succeed again after the attempt started: between
		// two extensions, so that the outage ends with the next one, not
		// at the instant of an extension or of a poll of Ready.
		const writable = 14*time.Second + 250*time.Millisecond
		st := &fullStore{Store: memory.New()}
		var started atomic.Int64 // the attempt's start, in Unix nanoseconds
		reg := &action.Registry{}
		reg.Register("Work", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			started.Store(time.Now().UnixNano())
			st.full.Store(true)
			time.AfterFunc(writable, func() { st.full.Store(false) })
			time.Sleep(40 * time.Second)
			return nil, nil
		}))
		var log syncbuf.Buffer
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a", LeaseDuration: lease,
			Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(time.Second)
		if _, err := s.PutJob(ctx, "c", "j", &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Work"}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
		var notReady []time.Duration // since the attempt started
		for range 100 {
			time.Sleep(500 * time.Millisecond)
			if err := s.Ready(ctx); err != nil && started.Load() != 0 {
				notReady = append(notReady, time.Since(time.Unix(0, started.Load())))
			}
		}
		// The first extension, a third of the lease into the attempt,
		// fails; the next, two thirds into it, succeeds.
		every := lease / 3
		if len(notReady) == 0 || notReady[0] > every+time.Second || notReady[len(notReady)-1] < writable ||
			notReady[len(notReady)-1] > 2*every+time.Second {
			t.Errorf("Ready failed at %v after the attempt started, want from %v to %v", notReady, every, 2*every)
		}
		text := log.String()
		if n := strings.Count(text, "the store does not answer"); n != 1 {
			t.Errorf("the log says %d times that the store does not answer, want once", n)
		}
		if n := strings.Count(text, "extend leases: some failed"); n != 1 {
			t.Errorf("the log reports the failed extensions %d times, want once, as the outage starts", n)
		}
		m := regexp.MustCompile(`the store answers again" down_for=(\S+)`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("the log does not say that the store answers again:\n%s", text)
		}
		if d, err := time.ParseDuration(m[1]); err != nil || d < every {
			t.Errorf("down_for=%s, want at least %v", m[1], every)
		}
		if t.Failed() {
			t.Logf("log:\n%s", text)
		}
	})
}

// extensionsFailStore is a memory store whose writes of a job (PutJob, by
// which an instance moves its claims on the attempts that run beside
// others) and extensions of permits fail with errFull while full is set,
// and whose other calls answer.
type extensionsFailStore struct {
	*memory.Store
	full atomic.Bool
}

func (s *extensionsFailStore) PutJob(ctx context.Context, r *scheduler.JobRecord) error {
	if s.full.Load() {
		return errFull
	}
	return s.Store.PutJob(ctx, r)
}

func (s *extensionsFailStore) ExtendPermits(ctx context.Context, holder string, now, until time.Time) (int, error) {
	if s.full.Load() {
		return 0, errFull
	}
	return s.Store.ExtendPermits(ctx, holder, now, until)
}

// TestExtensionsFailingAreAnOutage: the failed extensions of the claims
// on attempts that run beside others (runPolicy.overlap AllowAll) and of
// the permits of a collection's limits count toward an outage as those of
// the jobs' leases do: Ready reports it from the first failed extension
// until one succeeds again, and the log says so once each way.
func TestExtensionsFailingAreAnOutage(t *testing.T) {
	const lease = 30 * time.Second
	every := lease / 3
	for _, tc := range []struct {
		name string
		job  func(at time.Time) *scheduler.Job
		// first is when the first extension fails, after the attempt
		// started; until when full ends, the next one succeeding.
		first, until time.Duration
	}{{
		// The claim on the attempt lasts its timeout (5 s) and a lease:
		// it is extended once less than two thirds of a lease is left.
		name: "AllowAll",
		job: func(at time.Time) *scheduler.Job {
			return &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Work"},
				RunPolicy: &scheduler.RunPolicy{Overlap: scheduler.OverlapAllowAll}}
		},
		first: 5*time.Second + lease - 2*every, until: 28 * time.Second,
	}, {
		// The permits are extended with the job's lease, a third of a
		// lease into the attempt; the next extension would find them
		// expiring, so full ends before it.
		name: "permits",
		job: func(at time.Time) *scheduler.Job {
			return &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Work"}}
		},
		first: every, until: every + every/2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				st := &extensionsFailStore{Store: memory.New()}
				var started atomic.Int64 // the attempt's start, in Unix nanoseconds
				reg := &action.Registry{}
				reg.Register("Work", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
					if started.CompareAndSwap(0, time.Now().UnixNano()) {
						st.full.Store(true)
						time.AfterFunc(tc.until, func() { st.full.Store(false) })
					}
					time.Sleep(2 * lease)
					return nil, nil
				}))
				var log syncbuf.Buffer
				s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a", LeaseDuration: lease, ActionTimeout: 5 * time.Second,
					Logger: slog.New(slog.NewTextHandler(&log, nil))})
				if err != nil {
					t.Fatal(err)
				}
				putLimits(t, s, scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 10})
				if _, err := s.PutJob(ctx, "c", "j", tc.job(time.Now().Add(time.Second)), nil); err != nil {
					t.Fatal(err)
				}
				if err := s.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer s.Stop(ctx)
				var notReady []time.Duration // since the attempt started
				for range 150 {
					time.Sleep(500 * time.Millisecond)
					if err := s.Ready(ctx); err != nil && started.Load() != 0 {
						notReady = append(notReady, time.Since(time.Unix(0, started.Load())))
					}
				}
				text := log.String()
				if len(notReady) == 0 || notReady[0] > tc.first+time.Second || notReady[len(notReady)-1] < tc.until-time.Second ||
					notReady[len(notReady)-1] > tc.until+every {
					t.Errorf("Ready failed at %v after the attempt started, want from %v to after %v", notReady, tc.first, tc.until)
				}
				if n := strings.Count(text, "the store does not answer"); n != 1 {
					t.Errorf("the log says %d times that the store does not answer, want once", n)
				}
				if n := strings.Count(text, "the store answers again"); n != 1 {
					t.Errorf("the log says %d times that the store answers again, want once", n)
				}
				// Once each way: the failed extensions in between are not
				// warned of one by one.
				for l := range strings.Lines(text) {
					if (strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR")) && strings.Contains(l, errFull.Error()) &&
						!strings.Contains(l, "the store does not answer") {
						t.Errorf("the log warns of a failure the outage counts: %s", l)
					}
				}
				if t.Failed() {
					t.Logf("log:\n%s", text)
				}
			})
		})
	}
}

// verdictStore is a memory store whose writes of the run loop (records
// and lease extensions) fail with errFull while full is set, and whose
// reads answer, as fullStore's do; an extension of the lease of a job
// that is gone then answers ErrNotFound, as a store that finds no row to
// write does, without writing.
type verdictStore struct{ fullStore }

func (s *verdictStore) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if s.full.Load() {
		if _, err := s.Store.GetJob(ctx, collection, name); err != nil {
			return err
		}
	}
	return s.fullStore.ExtendLease(ctx, collection, name, owner, until)
}

// TestVerdictDoesNotEndWriteOutage: while the store's writes fail, a pass
// of the lease keeper whose calls all answer without writing (the
// extension of the lease of a job deleted while its attempt runs meets
// ErrNotFound) does not end the outage that a failed write started: Ready
// reports it until a write succeeds, or until a call of the run loop
// answers a LeaseDuration after the last write failed.
func TestVerdictDoesNotEndWriteOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		const lease = 30 * time.Second
		every := lease / 3
		st := &verdictStore{fullStore{Store: memory.New()}}
		started := make(chan struct{})
		reg := &action.Registry{}
		reg.Register("Work", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			st.full.Store(true)
			close(started)
			time.Sleep(2 * lease)
			return nil, nil
		}))
		var log syncbuf.Buffer
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a", LeaseDuration: lease,
			Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(time.Second)
		if _, err := s.PutJob(ctx, "c", "j", &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Work"}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
		<-started
		// The first extension, a third of the lease into the attempt,
		// fails: the outage starts.
		time.Sleep(every + every/5)
		if err := s.Ready(ctx); err == nil {
			t.Fatalf("Ready = nil once the first extension failed, want the outage")
		}
		if err := s.DeleteJob(ctx, "c", "j", nil); err != nil {
			t.Fatal(err)
		}
		// The next extension, two thirds of the lease into the attempt,
		// finds the job gone: no write succeeded.
		time.Sleep(every)
		if err := s.Ready(ctx); err == nil {
			t.Errorf("Ready = nil once an extension found the job deleted, while writes still fail; want the outage")
		}
		if text := log.String(); strings.Contains(text, "the store answers again") {
			t.Errorf("the log says the store answers again while its writes fail:\n%s", text)
		}
		// Once the writes no longer fail, with none left to try (the
		// attempt still runs), the loop's calls that answer end the
		// outage a LeaseDuration after the last write failed.
		st.full.Store(false)
		time.Sleep(lease + 2*scheduler.DefaultPollInterval)
		if err := s.Ready(ctx); err != nil {
			t.Errorf("Ready = %v a LeaseDuration after the last write failed, want nil", err)
		}
	})
}

// writesFailStore is a memory store whose writes of the run loop but its
// claims (records, lease extensions, takes and give-backs of permits) fail
// with errFull while full is set, as while a disk is full; a claim that
// takes jobs sets full while fillOnClaim is set.
type writesFailStore struct {
	*memory.Store
	full, fillOnClaim atomic.Bool
}

func (s *writesFailStore) ClaimDue(ctx context.Context, now time.Time, owner string, until time.Time, limit int) ([]*scheduler.JobRecord, error) {
	rs, err := s.Store.ClaimDue(ctx, now, owner, until, limit)
	if len(rs) > 0 && s.fillOnClaim.Load() {
		s.full.Store(true)
	}
	return rs, err
}

func (s *writesFailStore) ClaimDueBy(ctx context.Context, req scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	rs, err := s.Store.ClaimDueBy(ctx, req)
	if len(rs) > 0 && s.fillOnClaim.Load() {
		s.full.Store(true)
	}
	return rs, err
}

func (s *writesFailStore) Record(ctx context.Context, owner string, r *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if s.full.Load() {
		return errFull
	}
	return s.Store.Record(ctx, owner, r, history)
}

func (s *writesFailStore) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	if s.full.Load() {
		errs := make([]error, len(batch))
		for i := range errs {
			errs[i] = errFull
		}
		return errs
	}
	return s.Store.RecordBatch(ctx, owner, batch)
}

func (s *writesFailStore) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if s.full.Load() {
		return errFull
	}
	return s.Store.ExtendLease(ctx, collection, name, owner, until)
}

func (s *writesFailStore) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	if s.full.Load() {
		errs := make([]error, len(jobs))
		for i := range errs {
			errs[i] = errFull
		}
		return errs
	}
	return s.Store.ExtendLeases(ctx, owner, until, jobs)
}

func (s *writesFailStore) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	if s.full.Load() {
		return scheduler.PermitGrant{}, errFull
	}
	return s.Store.AcquirePermits(ctx, req)
}

func (s *writesFailStore) ReleasePermits(ctx context.Context, holder string) error {
	if s.full.Load() {
		return errFull
	}
	return s.Store.ReleasePermits(ctx, holder)
}

// TestPermitTakesFailingAreAnOutage: when the store's writes fail once
// jobs of a collection with limits are claimed, the failed takes (and
// give-backs) of their permits count toward the outage that the log
// notes once when it starts and once when it ends, rather than a warning
// each; the attempts run when the store is back.
func TestPermitTakesFailingAreAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := &writesFailStore{Store: memory.New()}
		st.fillOnClaim.Store(true)
		var ran atomic.Int32
		reg := &action.Registry{}
		reg.Register("Work", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			ran.Add(1)
			return nil, nil
		}))
		var log syncbuf.Buffer
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a",
			Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		putLimits(t, s, scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 10})
		at := time.Now().Add(time.Second)
		for _, name := range []string{"j1", "j2", "j3"} {
			if _, err := s.PutJob(ctx, "c", name, &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Work"}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer s.Stop(ctx)
		time.Sleep(10 * time.Second)
		if err := s.Ready(ctx); err == nil {
			t.Errorf("Ready = nil while the writes fail, want the outage")
		}
		st.fillOnClaim.Store(false)
		st.full.Store(false)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if n := ran.Load(); n != 3 {
			t.Errorf("%d attempts ran once the store was back, want 3", n)
		}
		text := log.String()
		if n := strings.Count(text, "the store does not answer"); n != 1 {
			t.Errorf("the log says %d times that the store does not answer, want once", n)
		}
		if n := strings.Count(text, "the store answers again"); n != 1 {
			t.Errorf("the log says %d times that the store answers again, want once", n)
		}
		for l := range strings.Lines(text) {
			if (strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR")) && strings.Contains(l, "permits") &&
				!strings.Contains(l, "the store does not answer") {
				t.Errorf("the log warns of a failure of permits the outage counts: %s", l)
			}
		}
		if t.Failed() {
			t.Logf("log:\n%s", text)
		}
	})
}
