package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/testcert"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// certJob is a job of e calling its server with a client certificate
// (pfx and its password "pfx-pw").
func certJob(t *testing.T, e *sealEnv) *scheduler.Job {
	t.Helper()
	job := e.basicJob("")
	job.Action.ErrorAction = nil
	pfx, _ := testcert.Pfx(t, "authtype-client", "pfx-pw")
	job.Action.Request.Authentication = &action.Authentication{Type: action.AuthClientCertificate, Pfx: pfx, Password: "pfx-pw"}
	return job
}

// toBasic is a patch that makes a ClientCertificate authentication a
// Basic one and keeps its password.
const toBasic = `{"action": {"request": {"authentication": {"type": "Basic", "username": "eve", "pfx": null}}}}`

// TestKeptSecretNotUsedOtherwise: a write that changes the type of an
// authentication and keeps its secret (a certificate's password kept as
// a Basic password, which the server would read in a header) is refused
// at the secret's path, naming both types; with the secret given again
// it is accepted.
func TestKeptSecretNotUsedOtherwise(t *testing.T) {
	ctx := context.Background()
	e := newSealEnv(t, durable{memory.New()}, newKeyring(t), nil)
	const path = "action.request.authentication.password"
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, scheduler.ErrInvalid) || pathsOf(err) != path {
			t.Fatalf("%s = %v, want ErrInvalid at %s", what, err, path)
		}
		if msg := err.Error(); !strings.Contains(msg, "ClientCertificate") || !strings.Contains(msg, "Basic") || !strings.Contains(msg, "give the secret again") {
			t.Errorf("%s: %q does not say that the authentication changed from ClientCertificate to Basic and that the secret must be given again", what, msg)
		}
	}
	if _, err := e.s.PutJob(ctx, "c", "cert", certJob(t, e), nil); err != nil {
		t.Fatal(err)
	}
	_, err := e.s.PatchJob(ctx, "c", "cert", []byte(toBasic), nil)
	refused("PatchJob to Basic keeping the password", err)
	if got, _ := e.run(t, "cert"); strings.Contains(got, "pfx-pw") {
		t.Fatalf("the server received the certificate's password as a Basic password: %q", got)
	}

	read, err := e.s.GetJob(ctx, "c", "cert")
	if err != nil {
		t.Fatal(err)
	}
	au := read.Job.Action.Request.Authentication
	au.Type, au.Username, au.Pfx = action.AuthBasic, "eve", ""
	au.CertificateThumbprint, au.CertificateSubjectName, au.CertificateExpirationDate = "", "", nil
	_, err = e.s.PutJob(ctx, "c", "cert", read.Job, nil)
	refused("PutJob of the read-back definition as Basic", err)

	// Given again, the password goes where the job now sends it.
	if _, err := e.s.PatchJob(ctx, "c", "cert", []byte(`{"action": {"request": {"authentication": {"type": "Basic", "username": "eve", "pfx": null, "password": "basic-pw"}}}}`), nil); err != nil {
		t.Fatalf("PatchJob to Basic with a password: %v", err)
	}
	if got, h := e.run(t, "cert"); got != "eve:basic-pw" {
		t.Errorf("the server received %q (%s: %s), want eve:basic-pw", got, h.Status, h.Message)
	}
}

// TestSecretSealedWithoutAuthType: a certificate's password and pfx
// stored sealed for their job, field and destination alone, as before a
// sealed value named its authentication type, open for a write that
// keeps the type, are refused by one that changes it, and ResealSecrets
// seals them again.
func TestSecretSealedWithoutAuthType(t *testing.T) {
	ctx := context.Background()
	st := durable{memory.New()}
	keys := newKeyring(t)
	e := newSealEnv(t, st, keys, nil)
	dest := e.target.URL // https://127.0.0.1:PORT: the destination as a sealed value names it
	for _, name := range []string{"a", "b"} {
		job := certJob(t, e)
		au := job.Action.Request.Authentication
		for _, f := range []struct {
			field string
			v     *string
		}{{"password", &au.Password}, {"pfx", &au.Pfx}} {
			sealed, err := keys.Seal(*f.v, "c/"+name+"#action.request.authentication."+f.field+" to "+dest)
			if err != nil {
				t.Fatal(err)
			}
			*f.v = sealed
		}
		if err := st.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: job, State: scheduler.JobDisabled, ETag: "e"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.s.PatchJob(ctx, "c", "a", []byte(toBasic), nil); pathsOf(err) != "action.request.authentication.password" ||
		!strings.Contains(err.Error(), "ClientCertificate") || !strings.Contains(err.Error(), "Basic") {
		t.Errorf("PatchJob to Basic keeping the password = %v, want a refusal at the password naming both types", err)
	}
	if _, err := e.s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"method": "POST"}}}`), nil); err != nil {
		t.Errorf("PatchJob keeping the authentication: %v", err)
	}
	if _, err := e.s.PatchJob(ctx, "c", "a", []byte(toBasic), nil); pathsOf(err) != "action.request.authentication.password" {
		t.Errorf("PatchJob to Basic keeping the password, after a write = %v, want a refusal at the password", err)
	}

	// a was sealed again by its write; b is by ResealSecrets.
	if n, err := e.s.ResealSecrets(ctx); err != nil || n != 1 {
		t.Errorf("ResealSecrets = %d, %v, want 1 job", n, err)
	}
	if n, err := e.s.ResealSecrets(ctx); err != nil || n != 0 {
		t.Errorf("second ResealSecrets = %d, %v, want 0", n, err)
	}
	r, err := st.GetJob(ctx, "c", "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Open(r.Job.Action.Request.Authentication.Password, "c/b#action.request.authentication.password to "+dest); err == nil {
		t.Errorf("after ResealSecrets job b's password still opens for its job, field and destination alone")
	}
	if !secrets.IsSealed(r.Job.Action.Request.Authentication.Pfx) {
		t.Errorf("after ResealSecrets job b's pfx is not sealed")
	}
	if _, err := e.s.PatchJob(ctx, "c", "b", []byte(toBasic), nil); pathsOf(err) != "action.request.authentication.password" {
		t.Errorf("PatchJob to Basic keeping the password, after ResealSecrets = %v, want a refusal at the password", err)
	}
	if _, err := e.s.PatchJob(ctx, "c", "b", []byte(`{"action": {"request": {"method": "POST"}}}`), nil); err != nil {
		t.Errorf("PatchJob keeping the authentication, after ResealSecrets: %v", err)
	}
}

// TestOAuthSecretSealedForOrigin: an ActiveDirectoryOAuth secret stored
// sealed for its job, field and the request's origin alone, as before its
// destination named the token endpoint, opens for a write that keeps the
// authority and tenant (a patch, a put of the definition read back), is
// refused by one that changes the authority, and ResealSecrets seals it
// again.
func TestOAuthSecretSealedForOrigin(t *testing.T) {
	ctx := context.Background()
	st := durable{memory.New()}
	keys := newKeyring(t)
	s := newDestScheduler(t, st, keys)
	const path = "action.request.authentication.secret"
	for _, name := range []string{"a", "b", "c"} {
		if _, err := s.PutJobJSON(ctx, "c", name, []byte(`{"action": {"type": "Https", "request": {"uri": "https://api.example.com/run", "method": "GET",
			"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t", "audience": "a", "clientId": "c", "secret": "s-1"}}},
			"recurrence": {"frequency": "Day", "interval": 1}, "state": "Disabled"}`), nil); err != nil {
			t.Fatal(err)
		}
		r, err := st.GetJob(ctx, "c", name)
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := keys.Seal("s-1", "c/"+name+"#"+path+" to https://api.example.com:443")
		if err != nil {
			t.Fatal(err)
		}
		r.Job.Action.Request.Authentication.Secret = sealed
		if err := st.PutJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"authentication": {"authority": "https://login.example.net/"}}}}`), nil); pathsOf(err) != path ||
		!strings.Contains(err.Error(), "https://login.example.net") {
		t.Errorf("PatchJob moving the authority = %v, want a refusal at %s naming the new authority", err, path)
	}
	if _, err := s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"method": "POST"}}}`), nil); err != nil {
		t.Errorf("PatchJob keeping the authority: %v", err)
	}
	read, err := s.GetJob(ctx, "c", "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "b", read.Job, nil); err != nil {
		t.Errorf("PutJob of the read-back definition: %v", err)
	}
	// a and b were sealed again by their writes; c is by ResealSecrets.
	if n, err := s.ResealSecrets(ctx); err != nil || n != 1 {
		t.Errorf("ResealSecrets = %d, %v, want 1 job", n, err)
	}
	if n, err := s.ResealSecrets(ctx); err != nil || n != 0 {
		t.Errorf("second ResealSecrets = %d, %v, want 0", n, err)
	}
	r, err := st.GetJob(ctx, "c", "c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Open(r.Job.Action.Request.Authentication.Secret, "c/c#"+path+" to https://api.example.com:443"); err == nil {
		t.Errorf("after ResealSecrets job c's secret still opens for the request's origin alone")
	}
	if _, err := s.PatchJob(ctx, "c", "c", []byte(`{"action": {"request": {"method": "POST"}}}`), nil); err != nil {
		t.Errorf("PatchJob after ResealSecrets: %v", err)
	}
}
