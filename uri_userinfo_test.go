package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// TestURIUserInfo: a put refuses a request uri that holds a user name and
// password, even with a key ring to seal secrets; a job stored with one
// before the rule still reads and runs as it did, a patch of it that
// leaves the uri so is refused at the uri's path, and one that moves the
// credentials into authentication is taken.
// The SQL stores read a definition with sqlstore.DecodeJob, as SQLite
// does here, without checking it.
func TestURIUserInfo(t *testing.T) {
	stores := map[string]func(t *testing.T) scheduler.Store{
		"memory": func(t *testing.T) scheduler.Store { return durable{memory.New()} },
		"sqlite": openSQLite,
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) { testURIUserInfo(t, open(t)) })
	}
}

func testURIUserInfo(t *testing.T, st scheduler.Store) {
	ctx := context.Background()
	e := newSealEnv(t, st, newKeyring(t), nil)
	withUser := strings.Replace(e.target.URL, "https://", "https://alice:s3cret@", 1) + "/x"
	job := e.basicJob("unused")
	job.Action.ErrorAction = nil
	job.Action.Request.Authentication = nil
	job.Action.Request.URI = withUser

	const refusal = "action.request.uri: must not hold a user name or password; put them in action.request.authentication (type Basic)"
	_, err := e.s.PutJob(ctx, "c", "new", job, nil)
	if !errors.Is(err, scheduler.ErrInvalid) || err.Error() != refusal {
		t.Fatalf("PutJob with %s = %v, want %q", withUser, err, refusal)
	}

	// As stored before the rule.
	if err := st.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "old", Job: job, State: scheduler.JobDisabled, ETag: "e"}); err != nil {
		t.Fatal(err)
	}
	r, err := e.s.GetJob(ctx, "c", "old")
	if err != nil {
		t.Fatalf("GetJob of a job stored with a user in its uri: %v", err)
	}
	if got := r.Definition().Action.Request.URI; got != withUser {
		t.Errorf("GetJob: uri %q, want %q", got, withUser)
	}
	if got, h := e.run(t, "old"); got != "alice:s3cret" {
		t.Errorf("the stored job sent %q (%s), want alice:s3cret", got, h.Message)
	}

	_, err = e.s.PatchJob(ctx, "c", "old", []byte(`{"state": "Enabled"}`), nil)
	if !errors.Is(err, scheduler.ErrInvalid) || err.Error() != refusal {
		t.Errorf("PatchJob leaving the uri = %v, want %q", err, refusal)
	}
	_, err = e.s.PatchJob(ctx, "c", "old", []byte(`{"properties": {"state": "Enabled"}}`), nil)
	const underProperties = "properties.action.request.uri: must not hold a user name or password; put them in properties.action.request.authentication (type Basic)"
	if !errors.Is(err, scheduler.ErrInvalid) || err.Error() != underProperties {
		t.Errorf("PatchJob of an envelope leaving the uri = %v, want %q", err, underProperties)
	}

	fix := fmt.Sprintf(`{"action": {"request": {"uri": %q, "authentication": {"type": "Basic", "username": "alice", "password": "s3cret"}}}}`, e.target.URL+"/x")
	if _, err := e.s.PatchJob(ctx, "c", "old", []byte(fix), nil); err != nil {
		t.Fatalf("PatchJob moving the credentials: %v", err)
	}
	r, err = e.s.GetJob(ctx, "c", "old")
	if err != nil {
		t.Fatal(err)
	}
	req := r.Definition().Action.Request
	if diff := cmp.Diff(e.target.URL+"/x", req.URI); diff != "" {
		t.Errorf("uri after the patch (-want +got):\n%s", diff)
	}
	if a := req.Authentication; a == nil || a.Type != action.AuthBasic || !secrets.IsSealed(a.Password) {
		t.Errorf("authentication after the patch = %+v, want Basic with its password sealed", a)
	}
	if got, h := e.run(t, "old"); got != "alice:s3cret" {
		t.Errorf("after the patch the job sent %q (%s), want alice:s3cret", got, h.Message)
	}
}
