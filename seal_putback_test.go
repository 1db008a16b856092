package scheduler_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// clientPfx returns a base64 PKCS#12 file with a self-signed client
// certificate for common name cn.
func clientPfx(t *testing.T, cn, password string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	data, err := pkcs12.Modern.Encode(key, cert, nil, password)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(data)
}

// TestPutBackSealedPfx: the definition of a job with a client certificate,
// as GetJob returns it (the pfx and its password sealed), put back as
// JSON is accepted and keeps the certificate.
func TestPutBackSealedPfx(t *testing.T) {
	e := newSealEnv(t, durable{memory.New()}, newKeyring(t), nil)
	ctx := context.Background()
	def := e.basicJob("")
	def.Action.ErrorAction = nil
	def.Action.Request.Authentication = &action.Authentication{Type: action.AuthClientCertificate,
		Pfx: clientPfx(t, "putback-client", "pfx-pw"), Password: "pfx-pw"}
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
