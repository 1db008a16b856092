package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/testcert"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// TestPutSealedPfx: a job PUT with the client certificate its stored
// definition holds (the pfx and its password sealed for this job) is
// accepted, and keeps the certificate.
func TestPutSealedPfx(t *testing.T) {
	k, _, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	st := durableStore{memory.New()}
	s, _ := newSeeingScheduler(t, st, keys)
	pfx, _ := testcert.Pfx(t, "reports-client", "pfx-pw")
	body := func(pfx, password string) string {
		return `{"properties": {
  "action": {"type": "Https", "request": {"uri": "https://example.com/ok", "method": "GET",
    "authentication": {"type": "ClientCertificate", "pfx": "` + pfx + `", "password": "` + password + `"}}},
  "recurrence": {"frequency": "Week", "interval": 2, "schedule": {"weekDays": ["monday"], "hours": [9]}}, "state": "Disabled"}}`
	}
	h := httpapi.New(s, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(body(pfx, "pfx-pw"))))
	if rec.Code != http.StatusCreated {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	stored, err := st.GetJob(context.Background(), "sub1/rg1/jc1", "j1")
	if err != nil {
		t.Fatal(err)
	}
	au := stored.Job.Action.Request.Authentication
	if !secrets.IsSealed(au.Pfx) || !secrets.IsSealed(au.Password) {
		t.Fatalf("stored pfx and password are not sealed")
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(body(au.Pfx, au.Password))))
	if rec.Code != http.StatusOK {
		t.Fatalf("PUT with the sealed pfx: %d %s", rec.Code, rec.Body)
	}
	again, err := st.GetJob(context.Background(), "sub1/rg1/jc1", "j1")
	if err != nil {
		t.Fatal(err)
	}
	if a := again.Job.Action.Request.Authentication; !secrets.IsSealed(a.Pfx) || a.CertificateSubjectName != "CN=reports-client" {
		t.Errorf("after the PUT: pfx sealed %v, certificate subject %q; want a sealed pfx for CN=reports-client",
			secrets.IsSealed(a.Pfx), a.CertificateSubjectName)
	}
}

// TestPatchMovingKeptSecret: a PATCH that sends a job's action to another
// host and keeps its stored password is refused with 400 at the password;
// one that gives the password again is accepted.
func TestPatchMovingKeptSecret(t *testing.T) {
	k, _, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newSeeingScheduler(t, durableStore{memory.New()}, keys)
	h := httpapi.New(s, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", jc1+"/jobs/j1"+v, strings.NewReader(basicAuthJob("pw-1"))))
	if rec.Code != http.StatusCreated {
		t.Fatalf("PUT: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PATCH", jc1+"/jobs/j1"+v,
		strings.NewReader(`{"properties": {"action": {"request": {"uri": "https://collect.example.net/ok"}}}}`)))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"target":"properties.action.request.authentication.password"`) ||
		!strings.Contains(rec.Body.String(), "https://collect.example.net:443") {
		t.Errorf("PATCH to another host: %d %s, want 400 at the password naming the new destination", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PATCH", jc1+"/jobs/j1"+v,
		strings.NewReader(`{"properties": {"action": {"request": {"uri": "https://collect.example.net/ok", "authentication": {"password": "pw-2"}}}}}`)))
	if rec.Code != http.StatusOK {
		t.Errorf("PATCH to another host with the password: %d %s, want 200", rec.Code, rec.Body)
	}
}
