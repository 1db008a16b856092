package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// TestKeptPlainSecretNotSentElsewhere: without a key, the memory store
// keeps secrets as given; a patch that leaves such a secret out keeps it,
// and when it moves the action, or changes the type of the
// authentication, it is refused at the secret's path as a patch keeping
// a sealed secret is. A patch that gives the secret again, or keeps the
// destination, is accepted.
func TestKeptPlainSecretNotSentElsewhere(t *testing.T) {
	ctx := context.Background()
	e := newSealEnv(t, memory.New(), nil, nil)
	refused := func(what string, err error, path string, says ...string) {
		t.Helper()
		if !errors.Is(err, scheduler.ErrInvalid) || pathsOf(err) != path {
			t.Fatalf("%s = %v, want ErrInvalid at %s", what, err, path)
		}
		for _, w := range append(says, "give the secret again") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", what, err, w)
			}
		}
	}
	job := e.basicJob("pw-1")
	job.Action.ErrorAction = nil
	if _, err := e.s.PutJob(ctx, "c", "a", job, nil); err != nil {
		t.Fatal(err)
	}
	_, err := e.s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"uri": "https://collect.example.net/run"}}}`), nil)
	refused("PatchJob moving the action", err, "action.request.authentication.password", "https://collect.example.net:443", strings.TrimPrefix(e.target.URL, "https://"))
	if r, _ := e.s.GetJob(ctx, "c", "a"); r.Job.Action.Request.URI != e.target.URL {
		t.Errorf("the refused patch moved the job to %s", r.Job.Action.Request.URI)
	}
	if _, err := e.s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"uri": "`+e.target.URL+`/other", "method": "POST"}}}`), nil); err != nil {
		t.Errorf("PatchJob keeping the destination: %v", err)
	}
	if got, h := e.run(t, "a"); got != "alice:pw-1" {
		t.Errorf("the server received %q (%s: %s), want alice:pw-1", got, h.Status, h.Message)
	}

	// A certificate's password is not kept as a Basic password.
	cert := certJob(t, e)
	cert.Action.Request.Authentication.Password = "pfx-pw"
	if _, err := e.s.PutJob(ctx, "c", "cert", cert, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.s.PatchJob(ctx, "c", "cert", []byte(toBasic), nil)
	refused("PatchJob to Basic keeping the password", err, "action.request.authentication.password", "ClientCertificate", "Basic")

	// Given again, the secret moves.
	if _, err := e.s.PatchJob(ctx, "c", "a", []byte(`{"Action": {"Request": {"uri": "https://collect.example.net/run", "authentication": {"password": "pw-2"}}}}`), nil); err != nil {
		t.Errorf("PatchJob moving the action with the password given: %v", err)
	}
}
