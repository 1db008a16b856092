package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// seeingValidator is the Https executor of these tests: it validates every
// action and notes the Basic password of each one it validates.
type seeingValidator struct {
	mu   sync.Mutex
	seen []string
}

func (v *seeingValidator) Execute(context.Context, *action.Request) (*action.Result, error) {
	return &action.Result{}, nil
}

func (v *seeingValidator) ValidateAction(a *action.Action) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	pw := ""
	if a.Request != nil && a.Request.Authentication != nil {
		pw = a.Request.Authentication.Password
	}
	v.seen = append(v.seen, pw)
	return nil
}

func (v *seeingValidator) passwords() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := v.seen
	v.seen = nil
	return out
}

// durableStore is a memory store that does not say it is ephemeral, so
// that a keyring seals secrets in it.
type durableStore struct{ scheduler.Store }

func newSeeingScheduler(t *testing.T, st scheduler.Store, keys *secrets.Keyring) (*scheduler.Scheduler, *seeingValidator) {
	t.Helper()
	v := new(seeingValidator)
	reg := new(action.Registry)
	reg.Register(action.HTTPS, v)
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Secrets: keys, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(context.Background(), "sub1/rg1/jc1", nil, nil); err != nil {
		t.Fatal(err)
	}
	return s, v
}

func basicAuthJob(password string) string {
	return `{"properties": {
  "action": {"type": "Https", "request": {"uri": "https://example.com/ok", "method": "GET",
    "authentication": {"type": "Basic", "username": "alice", "password": "` + password + `"}}},
  "recurrence": {"frequency": "Week", "interval": 2, "schedule": {"weekDays": ["monday"], "hours": [9]}}, "state": "Disabled"}}`
}

// TestPutValidatesParsedJobOnce: a job PUT over the API is validated once
// (by the parse), and stored exactly as ParseJob followed by PutJob
// stores it, which validates it twice.
func TestPutValidatesParsedJobOnce(t *testing.T) {
	s, val := newSeeingScheduler(t, memory.New(), nil)
	h := httpapi.New(s, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(basicAuthJob("pw-1"))))
	if rec.Code != http.StatusCreated {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	if diff := cmp.Diff([]string{"pw-1"}, val.passwords()); diff != "" {
		t.Errorf("passwords validated by PUT (-want +got):\n%s", diff)
	}

	s2, val2 := newSeeingScheduler(t, memory.New(), nil)
	def, err := s2.ParseJob([]byte(basicAuthJob("pw-1")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.PutJob(context.Background(), "sub1/rg1/jc1", "j1", def, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pw-1", "pw-1"}, val2.passwords()); diff != "" {
		t.Errorf("passwords validated by ParseJob and PutJob (-want +got):\n%s", diff)
	}

	got, err := s.GetJob(context.Background(), "sub1/rg1/jc1", "j1")
	if err != nil {
		t.Fatal(err)
	}
	want, err := s2.GetJob(context.Background(), "sub1/rg1/jc1", "j1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Job, got.Job); diff != "" {
		t.Errorf("job stored by PUT differs from ParseJob + PutJob (-want +got):\n%s", diff)
	}
	if got.State != want.State || !got.Schedule.NextOccurrence.Equal(want.Schedule.NextOccurrence) {
		t.Errorf("PUT stored state %s, next %v; ParseJob + PutJob: %s, %v",
			got.State, got.Schedule.NextOccurrence, want.State, want.Schedule.NextOccurrence)
	}
}

// TestPutValidatesOpenedSecrets: a definition PUT with a sealed secret is
// validated again once the secret is opened, as PutJob validates it: the
// parse only saw the sealed text.
func TestPutValidatesOpenedSecrets(t *testing.T) {
	k, _, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	st := durableStore{memory.New()}
	s, val := newSeeingScheduler(t, st, keys)
	// The store keeps the password sealed for this job and field.
	def, err := s.ParseJob([]byte(basicAuthJob("pw-2")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(context.Background(), "sub1/rg1/jc1", "j1", def, nil); err != nil {
		t.Fatal(err)
	}
	stored, err := st.GetJob(context.Background(), "sub1/rg1/jc1", "j1")
	if err != nil {
		t.Fatal(err)
	}
	sealed := stored.Job.Action.Request.Authentication.Password
	if !secrets.IsSealed(sealed) {
		t.Fatalf("stored password %q is not sealed", sealed)
	}
	val.passwords()

	rec := httptest.NewRecorder()
	httpapi.New(s, nil).ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(basicAuthJob(sealed))))
	if rec.Code != http.StatusOK {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	if diff := cmp.Diff([]string{sealed, "pw-2"}, val.passwords()); diff != "" {
		t.Errorf("passwords validated by PUT (-want +got):\n%s", diff)
	}
}
