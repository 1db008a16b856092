package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// TestKeptSecretMovedBySchedule: Schedule given an action read back with
// its secret sealed, moved to another host, is refused at the secret's
// path saying where it went and where it would go, as PutJob is.
func TestKeptSecretMovedBySchedule(t *testing.T) {
	ctx := context.Background()
	e := newSealEnv(t, durable{memory.New()}, newKeyring(t), nil)
	act := e.basicJob("pw").Action
	act.ErrorAction = nil
	if _, err := e.s.Schedule(ctx, "nightly", recurrence.Daily(2, 0), act); err != nil {
		t.Fatal(err)
	}
	r, err := e.s.GetJob(ctx, scheduler.DefaultCollection, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Schedule(ctx, "nightly", recurrence.Daily(2, 0), r.Job.Action); err != nil {
		t.Errorf("Schedule of the read-back action: %v", err)
	}
	r.Job.Action.Request.URI = "https://collect.example.net/"
	_, err = e.s.Schedule(ctx, "nightly", recurrence.Daily(2, 0), r.Job.Action)
	if !errors.Is(err, scheduler.ErrInvalid) || pathsOf(err) != "action.request.authentication.password" {
		t.Fatalf("Schedule of the read-back action moved = %v, want ErrInvalid at the password", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "https://collect.example.net:443") || !strings.Contains(msg, "give the secret again") {
		t.Errorf("%q does not say where the secret would go and that it must be given again", msg)
	}
}

// getHookStore is a store, no BulkPutter, that calls after once, when a
// GetJob of job name has returned.
type getHookStore struct {
	scheduler.Store
	name  string
	after func()
}

func (h *getHookStore) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	r, err := h.Store.GetJob(ctx, collection, name)
	if f := h.after; name == h.name && f != nil {
		h.after = nil
		f()
	}
	return r, err
}

// bulkHookStore is the memory store, a BulkPutter, that calls after
// once, when a GetJobs has returned.
type bulkHookStore struct {
	*memory.Store
	after func()
}

func (h *bulkHookStore) GetJobs(ctx context.Context, collection string, names []string) ([]*scheduler.JobRecord, error) {
	r, err := h.Store.GetJobs(ctx, collection, names)
	if f := h.after; f != nil {
		h.after = nil
		f()
	}
	return r, err
}

// TestKeptSecretJudgedAgainstReplaced: a put whose sealed secret is
// judged against the job stored is judged against the version it
// replaces. A secret sealed for its job and field alone, as before
// sealed values named their destination, opens only when the job stored
// holds it; when a patch gives the job another secret between the put's
// read and its write, the put, judged again, is refused as it would be
// after the patch, and the patch's secret stays.
func TestKeptSecretJudgedAgainstReplaced(t *testing.T) {
	const path = "action.request.authentication.password"
	puts := []struct {
		name string
		bulk bool
		put  func(s *scheduler.Scheduler, def *scheduler.Job) error
	}{
		{"PutJob", false, func(s *scheduler.Scheduler, def *scheduler.Job) error {
			_, err := s.PutJob(context.Background(), "c", "a", def, nil)
			return err
		}},
		{"PutJobs", false, func(s *scheduler.Scheduler, def *scheduler.Job) error {
			_, err := s.PutJobs(context.Background(), "c", []scheduler.JobPut{{Name: "a", Job: def}}, nil)
			return err
		}},
		{"PutJobs into a BulkPutter", true, func(s *scheduler.Scheduler, def *scheduler.Job) error {
			_, err := s.PutJobs(context.Background(), "c", []scheduler.JobPut{{Name: "a", Job: def}}, nil)
			return err
		}},
	}
	for _, tt := range puts {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			keys := newKeyring(t)
			var st scheduler.Store
			var arm func(func())
			if tt.bulk {
				h := &bulkHookStore{Store: memory.New()}
				st, arm = h, func(f func()) { h.after = f }
			} else {
				h := &getHookStore{Store: durable{memory.New()}, name: "a"}
				st, arm = h, func(f func()) { h.after = f }
			}
			s := newDestScheduler(t, st, keys)
			if _, err := s.PutJobJSON(ctx, "c", "a", []byte(`{"action": {"type": "Https", "request": {"uri": "https://api.example.com/run", "method": "GET",
				"authentication": {"type": "Basic", "username": "alice", "password": "x"}}},
				"recurrence": {"frequency": "Day", "interval": 1}, "state": "Disabled"}`), nil); err != nil {
				t.Fatal(err)
			}
			sealed, err := keys.Seal("pw-1", "c/a#"+path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := st.GetJob(ctx, "c", "a")
			if err != nil {
				t.Fatal(err)
			}
			r.Job.Action.Request.Authentication.Password = sealed
			if err := st.PutJob(ctx, r); err != nil {
				t.Fatal(err)
			}
			def, err := s.GetJob(ctx, "c", "a")
			if err != nil {
				t.Fatal(err)
			}
			patched := false
			arm(func() {
				patched = true
				if _, err := s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"authentication": {"password": "pw-2"}}}}`), nil); err != nil {
					t.Errorf("PatchJob between the put's read and its write: %v", err)
				}
			})
			err = tt.put(s, def.Job)
			if pathsOf(err) != path || !strings.Contains(err.Error(), "does not open") {
				t.Errorf("put of the first secret after a patch gave another = %v, want a refusal at %s", err, path)
			}
			r, err = st.GetJob(ctx, "c", "a")
			if err != nil {
				t.Fatal(err)
			}
			if v := r.Job.Action.Request.Authentication.Password; patched && v == sealed {
				t.Errorf("the put wrote back the first secret over the patch's")
			}
		})
	}
}
