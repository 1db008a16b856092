package scheduler_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/testcert"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// TestPutBackSealedPfx: the definition of a job with a client certificate,
// as GetJob returns it (the pfx and its password sealed), put back as
// JSON is accepted and keeps the certificate.
func TestPutBackSealedPfx(t *testing.T) {
	e := newSealEnv(t, durable{memory.New()}, newKeyring(t), nil)
	ctx := context.Background()
	def := e.basicJob("")
	def.Action.ErrorAction = nil
	pfx, _ := testcert.Pfx(t, "putback-client", "pfx-pw")
	def.Action.Request.Authentication = &action.Authentication{Type: action.AuthClientCertificate,
		Pfx: pfx, Password: "pfx-pw"}
	if _, err := e.s.PutJob(ctx, "c", "cert", def, nil); err != nil {
		t.Fatal(err)
	}
	r, err := e.s.GetJob(ctx, "c", "cert")
	if err != nil {
		t.Fatal(err)
	}
	if au := r.Job.Action.Request.Authentication; !secrets.IsSealed(au.Pfx) {
		t.Fatalf("GetJob returned the pfx %.20q unsealed", au.Pfx)
	}
	data, err := json.Marshal(r.Job)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.PutJobJSON(ctx, "c", "cert", data, nil); err != nil {
		t.Fatalf("PutJobJSON of the definition GetJob returned: %v", err)
	}
	got, err := e.s.GetJob(ctx, "c", "cert")
	if err != nil {
		t.Fatal(err)
	}
	if au := got.Job.Action.Request.Authentication; !secrets.IsSealed(au.Pfx) || au.CertificateSubjectName != "CN=putback-client" {
		t.Errorf("after the put: pfx sealed %v, certificate subject %q; want a sealed pfx for CN=putback-client",
			secrets.IsSealed(au.Pfx), au.CertificateSubjectName)
	}
}
