package http_test

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	pkcs12 "software.sslmate.com/src/go-pkcs12"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/schedulertest"
	"github.com/jobclock/scheduler/secrets"
)

// certJob is a job of an Https action with ClientCertificate
// authentication, and an error action with errorPfx when it is not empty.
func certJob(pfx, password, errorPfx string) string {
	auth := func(pfx string) string {
		a, _ := json.Marshal(map[string]string{"type": "ClientCertificate", "pfx": pfx, "password": password})
		return string(a)
	}
	job := `{"action": {"type": "Https", "request": {"uri": "https://target.test/work", "method": "GET", "authentication": ` + auth(pfx) + `}`
	if errorPfx != "" {
		job += `, "errorAction": {"type": "Https", "request": {"uri": "https://target.test/alert", "method": "POST", "authentication": ` + auth(errorPfx) + `}}`
	}
	return job + `}}`
}

// TestCertificateCheckedWhenPut: a client certificate whose pfx is not a
// PKCS#12 file, or does not open with its password, is refused by
// PutJobJSON at the path of the field at fault, for the action and for the
// error action; a good one is stored and described by its thumbprint.
func TestCertificateCheckedWhenPut(t *testing.T) {
	p := newPKI(t)
	good := p.pfx(t, pkcs12.Modern, "client", "pfx-password")
	s := schedulertest.New(t, nil)
	for _, tt := range []struct {
		name   string
		job    string
		path   string // of the problem; "" for none
		reason string
	}{
		{"malformed pfx", certJob("bm90IGEgcGZ4", "pfx-password", ""), "action.request.authentication.pfx", "is not a usable PKCS#12 file"},
		{"wrong password", certJob(good, "not-the-password", ""), "action.request.authentication.password", "does not open the pfx (incorrect password)"},
		{"malformed pfx of the error action", certJob(good, "pfx-password", "bm90IGEgcGZ4"), "action.errorAction.request.authentication.pfx", "is not a usable PKCS#12 file"},
		{"good pfx", certJob(good, "pfx-password", ""), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.PutJobJSON(t.Context(), scheduler.DefaultCollection, "j", []byte(tt.job), nil)
			var got []string
			for _, ve := range scheduler.ValidationErrors(err) {
				got = append(got, ve.Path)
				if !strings.Contains(ve.Reason, tt.reason) {
					t.Errorf("problem %v does not say %q", ve, tt.reason)
				}
				if strings.Contains(ve.Error(), "pfx-password") || strings.Contains(ve.Error(), good) {
					t.Errorf("problem %v shows a secret", ve)
				}
			}
			var want []string
			if tt.path != "" {
				want = []string{tt.path}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("PutJobJSON problems at (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}

	r, err := s.GetJob(t.Context(), scheduler.DefaultCollection, "j")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := base64.StdEncoding.DecodeString(good)
	_, cert, _, err := pkcs12.DecodeChain(data, "pfx-password")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(cert.Raw)
	if got, want := r.Job.Action.Request.Authentication.CertificateThumbprint, strings.ToUpper(hex.EncodeToString(sum[:])); got != want {
		t.Errorf("stored thumbprint %q, want %q", got, want)
	}
}

// TestSealedCertificateNotOpened: ValidateAction leaves a sealed pfx or
// password alone (the Scheduler checks the job again once it opened
// them), and still checks the rest of the request.
func TestSealedCertificateNotOpened(t *testing.T) {
	k, _, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := keys.Seal("bm90IGEgcGZ4", "c/j/pfx")
	if err != nil {
		t.Fatal(err)
	}
	ex := httpaction.New(nil)
	cert := func(uri, pfx, password string) *action.Action {
		return &action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: uri, Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthClientCertificate, Pfx: pfx, Password: password}}}
	}
	if err := ex.ValidateAction(cert("https://target.test/", sealed, "pw")); err != nil {
		t.Errorf("ValidateAction with a sealed pfx = %v, want nil", err)
	}
	if err := ex.ValidateAction(cert("https://target.test/", "bm90IGEgcGZ4", "pw")); err == nil {
		t.Errorf("ValidateAction with a malformed pfx = nil, want an error")
	}
	var fe *httpaction.FieldError
	if err := ex.ValidateAction(cert("http://target.test/", sealed, "pw")); !errors.As(err, &fe) || fe.Path != "request.authentication.type" {
		t.Errorf("ValidateAction with a sealed pfx and an http uri = %v, want a problem at request.authentication.type", err)
	}
}
