package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// durable is a memory store that does not say it is Ephemeral, as a
// database would not.
type durable struct{ scheduler.Store }

func newKeyring(t *testing.T, keys ...*secrets.Key) *secrets.Keyring {
	t.Helper()
	if len(keys) == 0 {
		k, _, err := secrets.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		keys = []*secrets.Key{k}
	}
	r, err := secrets.NewKeyring(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sealEnv is a Scheduler whose Https jobs call a TLS server that records
// the Basic credentials it receives.
type sealEnv struct {
	s      *scheduler.Scheduler
	store  scheduler.Store
	target *httptest.Server
	auth   chan string
	hist   chan scheduler.HistoryEntry
}

// newSealEnv starts a Scheduler over st; with a prev, its jobs call
// prev's server.
func newSealEnv(t *testing.T, st scheduler.Store, keys *secrets.Keyring, prev *sealEnv) *sealEnv {
	t.Helper()
	e := &sealEnv{store: st, auth: make(chan string, 10), hist: make(chan scheduler.HistoryEntry, 10)}
	if prev != nil {
		e.target, e.auth = prev.target, prev.auth
	} else {
		auth := e.auth
		e.target = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, _ := r.BasicAuth()
			auth <- u + ":" + p
		}))
		t.Cleanup(e.target.Close)
	}
	reg := new(action.Registry)
	reg.Register(action.HTTPS, httpaction.New(&httpaction.Options{Client: e.target.Client(), Timeout: 5 * time.Second}))
	storagequeue.Register(reg, nil)
	t.Cleanup(func() { reg.Close(context.Background()) })
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler), Executors: reg, Secrets: keys,
		PollInterval: 20 * time.Millisecond, OnHistory: func(h scheduler.HistoryEntry) { e.hist <- h }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	if _, err := s.PutCollection(context.Background(), "c", nil, nil); err != nil && !errors.Is(err, scheduler.ErrConflict) {
		t.Fatal(err)
	}
	e.s = s
	return e
}

// basicJob is a job calling the env's server with Basic credentials, whose
// error action sends to a storage queue with a SAS token.
func (e *sealEnv) basicJob(password string) *scheduler.Job {
	return &scheduler.Job{
		Action: action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: e.target.URL, Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthBasic, Username: "alice", Password: password}},
			ErrorAction: &action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: e.target.URL + "/error", Method: "POST",
				Authentication: &action.Authentication{Type: action.AuthActiveDirectoryOAuth, Tenant: "t", Audience: "a", ClientID: "c", Secret: "oauth-" + password}}}},
		Recurrence: &recurrence.Recurrence{Frequency: recurrence.Day, Interval: 1},
		StartTime:  ptr(time.Now().Add(24 * time.Hour)),
	}
}

// run runs the job now and returns the credentials the server received.
func (e *sealEnv) run(t *testing.T, name string) (string, scheduler.HistoryEntry) {
	t.Helper()
	if _, err := e.s.RunJob(context.Background(), "c", name); err != nil {
		t.Fatal(err)
	}
	var h scheduler.HistoryEntry
	select {
	case h = <-e.hist:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not run within 10s")
	}
	select {
	case got := <-e.auth:
		return got, h
	default:
		return "", h
	}
}

// TestSecretsSealedInStore: with a keyring, every secret of a definition
// reaches the store sealed with the primary key, for its job and field,
// and the executor receives it in clear.
func TestSecretsSealedInStore(t *testing.T) {
	keys := newKeyring(t)
	e := newSealEnv(t, durable{memory.New()}, keys, nil)
	ctx := context.Background()
	if _, err := e.s.PutJob(ctx, "c", "a", e.basicJob("pw-CANARY"), nil); err != nil {
		t.Fatal(err)
	}
	r, err := e.store.GetJob(ctx, "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(r.Job)
	if strings.Contains(string(stored), "CANARY") {
		t.Fatalf("the stored definition holds a secret in clear: %s", stored)
	}
	for _, v := range []string{r.Job.Action.Request.Authentication.Password, r.Job.Action.ErrorAction.Request.Authentication.Secret} {
		if id, ok := secrets.KeyID(v); !ok || id != keys.Primary() {
			t.Errorf("stored secret %q is not sealed with the primary key %s", v, keys.Primary())
		}
	}
	if got, h := e.run(t, "a"); got != "alice:pw-CANARY" || h.Status != scheduler.StatusCompleted {
		t.Errorf("the server received %q (%s: %s), want alice:pw-CANARY", got, h.Status, h.Message)
	}

	// The record GetJob returns round-trips: put again as it is, it keeps
	// its secrets, and so does a patch.
	if _, err := e.s.PutJob(ctx, "c", "a", r.Job, nil); err != nil {
		t.Fatalf("PutJob of the stored definition: %v", err)
	}
	if _, err := e.s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"method": "POST"}}}`), nil); err != nil {
		t.Fatalf("PatchJob: %v", err)
	}
	if got, _ := e.run(t, "a"); got != "alice:pw-CANARY" {
		t.Errorf("after a put and a patch the server received %q, want alice:pw-CANARY", got)
	}

	// A sealed value copied into another job does not open there.
	_, err = e.s.PutJob(ctx, "c", "b", r.Job, nil)
	paths := pathsOf(err)
	if !errors.Is(err, scheduler.ErrInvalid) || paths != "action.errorAction.request.authentication.secret action.request.authentication.password" {
		t.Errorf("PutJob of another job's sealed secrets = %v, want ErrInvalid at both secrets", err)
	}
	if err != nil && !strings.Contains(err.Error(), "does not open for this job") {
		t.Errorf("error %q does not say why", err)
	}
}

func pathsOf(err error) string {
	var p []string
	for _, v := range scheduler.ValidationErrors(err) {
		p = append(p, v.Path)
	}
	return strings.Join(p, " ")
}

// TestSecretRefusedWithoutKey: a store that keeps data at rest gets no
// secret unsealed; without a key, definitions with secrets are refused at
// each secret's path, and those without are accepted.
func TestSecretRefusedWithoutKey(t *testing.T) {
	e := newSealEnv(t, durable{memory.New()}, nil, nil)
	ctx := context.Background()
	_, err := e.s.PutJob(ctx, "c", "a", e.basicJob("pw"), nil)
	if !errors.Is(err, scheduler.ErrInvalid) || pathsOf(err) != "action.errorAction.request.authentication.secret action.request.authentication.password" {
		t.Fatalf("PutJob with secrets and no key = %v, want ErrInvalid at both secrets", err)
	}
	if !strings.Contains(err.Error(), "no key to seal") {
		t.Errorf("error %q does not say that a key is missing", err)
	}
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "acct",
		"queueName": "queue", "sasToken": "?sig=x", "message": "m"}}}`), &scheduler.ParseOptions{ActionTypes: []action.Type{action.StorageQueue}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Schedule(ctx, "q", nil, def.Action); pathsOf(err) != "action.queueMessage.sasToken" {
		t.Errorf("Schedule with a SAS token and no key = %v, want an error at action.queueMessage.sasToken", err)
	}
	plain := e.basicJob("")
	plain.Action.Request.Authentication = nil
	plain.Action.ErrorAction = nil
	if _, err := e.s.PutJob(ctx, "c", "plain", plain, nil); err != nil {
		t.Errorf("PutJob without secrets and no key: %v", err)
	}
}

// TestEphemeralStoreWithoutKey: the memory store keeps nothing at rest,
// so without a key it takes secrets as they are, and jobs run with them.
func TestEphemeralStoreWithoutKey(t *testing.T) {
	st := memory.New()
	e := newSealEnv(t, st, nil, nil)
	ctx := context.Background()
	if _, err := e.s.PutJob(ctx, "c", "a", e.basicJob("pw"), nil); err != nil {
		t.Fatalf("PutJob with secrets into memory without a key: %v", err)
	}
	r, _ := st.GetJob(ctx, "c", "a")
	if got := r.Job.Action.Request.Authentication.Password; got != "pw" {
		t.Errorf("stored password = %q, want it as given", got)
	}
	if got, _ := e.run(t, "a"); got != "alice:pw" {
		t.Errorf("the server received %q, want alice:pw", got)
	}
}

// TestScheduleKeepsSealedJob: Schedule called again with the same secret
// leaves the job alone, although each sealing differs.
func TestScheduleKeepsSealedJob(t *testing.T) {
	e := newSealEnv(t, durable{memory.New()}, newKeyring(t), nil)
	ctx := context.Background()
	act := e.basicJob("pw").Action
	first, err := e.s.Schedule(ctx, "nightly", recurrence.Daily(2, 0), act)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.s.Schedule(ctx, "nightly", recurrence.Daily(2, 0), act)
	if err != nil {
		t.Fatal(err)
	}
	if again.Version != first.Version || again.ETag != first.ETag {
		t.Errorf("second Schedule rewrote the job (version %d -> %d)", first.Version, again.Version)
	}
	act.Request.Authentication.Password = "changed"
	changed, err := e.s.Schedule(ctx, "nightly", recurrence.Daily(2, 0), act)
	if err != nil {
		t.Fatal(err)
	}
	if changed.Version == first.Version {
		t.Error("Schedule with another password left the job alone")
	}
}

// TestResealSecrets: a keyring with a new primary key and the old one
// reseals sealed secrets and secrets stored before there was a key; then
// the new key alone runs the job.
func TestResealSecrets(t *testing.T) {
	ctx := context.Background()
	st := durable{memory.New()}
	oldKey, _, _ := secrets.GenerateKey()
	newKey, _, _ := secrets.GenerateKey()
	e := newSealEnv(t, st, newKeyring(t, oldKey), nil)
	if _, err := e.s.PutJob(ctx, "c", "a", e.basicJob("pw-a"), nil); err != nil {
		t.Fatal(err)
	}
	// A job stored unsealed, as before sealing existed.
	legacy := e.basicJob("pw-b")
	legacy.Action.ErrorAction = nil
	if err := st.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "b", Job: legacy, State: scheduler.JobDisabled, ETag: "e"}); err != nil {
		t.Fatal(err)
	}
	before, _ := st.GetJob(ctx, "c", "a")
	e.s.Stop(ctx)

	both := newSealEnv(t, st, newKeyring(t, newKey, oldKey), e)
	n, err := both.s.ResealSecrets(ctx)
	if err != nil || n != 2 {
		t.Fatalf("ResealSecrets = %d, %v, want 2 jobs", n, err)
	}
	for _, name := range []string{"a", "b"} {
		r, _ := st.GetJob(ctx, "c", name)
		for _, v := range []string{r.Job.Action.Request.Authentication.Password} {
			if id, _ := secrets.KeyID(v); id != newKey.ID() {
				t.Errorf("job %s: secret %q is not sealed with the new key", name, v)
			}
		}
		if name == "a" && (r.ETag != before.ETag || r.Schedule.NextOccurrence != before.Schedule.NextOccurrence) {
			t.Errorf("reseal changed the ETag or schedule of job a")
		}
	}
	if n, err := both.s.ResealSecrets(ctx); err != nil || n != 0 {
		t.Errorf("second ResealSecrets = %d, %v, want 0", n, err)
	}
	both.s.Stop(ctx)

	only := newSealEnv(t, st, newKeyring(t, newKey), e)
	if got, h := only.run(t, "a"); got != "alice:pw-a" {
		t.Errorf("after reseal the server received %q (%s), want alice:pw-a", got, h.Message)
	}
	if got, _ := only.run(t, "b"); got != "alice:pw-b" {
		t.Errorf("after reseal of an unsealed job the server received %q, want alice:pw-b", got)
	}
}

// TestUnknownKeyFailsAttempt: a job sealed with a key the scheduler does
// not have fails its attempts with a message naming the field and the key,
// and sends nothing.
func TestUnknownKeyFailsAttempt(t *testing.T) {
	ctx := context.Background()
	st := durable{memory.New()}
	first := newSealEnv(t, st, newKeyring(t), nil)
	job := first.basicJob("pw-CANARY")
	job.Action.RetryPolicy = nil
	if _, err := first.s.PutJob(ctx, "c", "a", job, nil); err != nil {
		t.Fatal(err)
	}
	first.s.Stop(ctx)
	other := newSealEnv(t, st, newKeyring(t), first)
	got, h := other.run(t, "a")
	if got != "" {
		t.Errorf("the server received %q from a job whose secret does not open", got)
	}
	if h.Status != scheduler.StatusFailed || !strings.Contains(h.Message, "action.request.authentication.password is sealed with key") {
		t.Errorf("history = %s: %q, want a failure naming the field and key", h.Status, h.Message)
	}
	if strings.Contains(fmt.Sprint(h), "CANARY") {
		t.Errorf("history holds the secret: %+v", h)
	}
}

// TestSealedKeys: SealedKeys names each key that a stored secret is
// sealed with, with the number of jobs and the first job and path; not
// secrets stored in clear, nor jobs without secrets.
func TestSealedKeys(t *testing.T) {
	ctx := context.Background()
	st := durable{memory.New()}
	if got, err := scheduler.SealedKeys(ctx, st); err != nil || got != nil {
		t.Fatalf("SealedKeys of an empty store = %v, %v; want none", got, err)
	}
	k1, _, _ := secrets.GenerateKey()
	k2, _, _ := secrets.GenerateKey()
	e := newSealEnv(t, st, newKeyring(t, k1), nil)
	for _, name := range []string{"a", "c"} {
		if _, err := e.s.PutJob(ctx, "c", name, e.basicJob("pw-"+name), nil); err != nil {
			t.Fatal(err)
		}
	}
	plain := e.basicJob("")
	plain.Action.Request.Authentication = nil
	plain.Action.ErrorAction = nil
	if _, err := e.s.PutJob(ctx, "c", "d", plain, nil); err != nil {
		t.Fatal(err)
	}
	e.s.Stop(ctx)
	legacy := e.basicJob("pw-e")
	legacy.Action.ErrorAction = nil
	if err := st.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "e", Job: legacy, State: scheduler.JobDisabled, ETag: "e"}); err != nil {
		t.Fatal(err)
	}
	e2 := newSealEnv(t, st, newKeyring(t, k2), e)
	if _, err := e2.s.PutJob(ctx, "c", "b", e2.basicJob("pw-b"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := scheduler.SealedKeys(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	want := []scheduler.SealedKey{
		{ID: k1.ID(), Jobs: 2, First: scheduler.JobKey{Collection: "c", Name: "a"}, Path: "action.errorAction.request.authentication.secret"},
		{ID: k2.ID(), Jobs: 1, First: scheduler.JobKey{Collection: "c", Name: "b"}, Path: "action.errorAction.request.authentication.secret"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SealedKeys (-want +got):\n%s", diff)
	}
}
