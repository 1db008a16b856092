package http_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

func TestBasicAuthentication(t *testing.T) {
	const user, password = "scheduler", "p@ss:word-1"
	srv := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != password {
			w.WriteHeader(nethttp.StatusUnauthorized)
			// A careless server echoes what it got.
			fmt.Fprintf(w, "bad credentials %q %q (%s)", u, p, r.Header.Get("Authorization"))
			return
		}
		fmt.Fprint(w, "welcome")
	}))
	ex := newExecutor(t, nil)

	req := newRequest("GET", srv.URL)
	req.Action.Request.Headers = map[string]string{"Authorization": "Bearer replaced"}
	req.Action.Request.Authentication = &action.Authentication{Type: action.AuthBasic, Username: user, Password: password}
	res, err := execute(t, ex, req)
	if err != nil || !strings.Contains(res.Message, "\nBody: welcome\n") {
		t.Errorf("Execute = %+v, %v; want success", res, err)
	}

	req.Action.Request.Authentication = &action.Authentication{Type: action.AuthBasic, Username: user, Password: "wrong-password"}
	res, err = execute(t, ex, req)
	var se *httpaction.StatusError
	if !errors.As(err, &se) || se.StatusCode != nethttp.StatusUnauthorized {
		t.Fatalf("Execute error = %v, want a 401 *StatusError", err)
	}
	encoded := base64.StdEncoding.EncodeToString([]byte(user + ":wrong-password"))
	if strings.Contains(res.Message, "wrong-password") || strings.Contains(res.Message, encoded) {
		t.Errorf("Message leaks the password: %q", res.Message)
	}
	if !strings.Contains(res.Message, "bad credentials") {
		t.Errorf("Message = %q, want the response body", res.Message)
	}
}

// pki is a test certificate authority.
type pki struct {
	ca   *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
	// serial numbers of issued certificates
	serial atomic.Int64
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "jobclock test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &pki{ca: ca, key: key, pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.serial.Store(1)
	return p
}

// clientCert issues a client certificate for cn.
func (p *pki) clientCert(t testing.TB, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial.Add(1)),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"jobclock"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// pfx returns the base64 PKCS#12 file of a client certificate for cn.
func (p *pki) pfx(t testing.TB, enc *pkcs12.Encoder, cn, password string) string {
	t.Helper()
	cert, key := p.clientCert(t, cn)
	data, err := enc.Encode(key, cert, []*x509.Certificate{p.ca}, password)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(data)
}

// mtlsServer starts a TLS server that requires a client certificate issued
// by p and answers with its common name. It counts connections in conns.
func mtlsServer(t testing.TB, p *pki, conns *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		fmt.Fprintf(w, "hello %s", r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: p.pool}
	srv.Config.ConnState = func(_ net.Conn, s nethttp.ConnState) {
		if s == nethttp.StateNew && conns != nil {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = nil
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// trustingClient returns a client that trusts srv's certificate.
func trustingClient(t testing.TB, srv *httptest.Server) *nethttp.Client {
	t.Helper()
	tr := srv.Client().Transport.(*nethttp.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &nethttp.Client{Transport: tr}
}

func certRequest(uri, pfx, password string) *action.Request {
	req := newRequest("GET", uri)
	req.Action.Type = action.HTTPS
	req.Action.Request.Authentication = &action.Authentication{Type: action.AuthClientCertificate, Pfx: pfx, Password: password}
	return req
}

func TestClientCertificateAuthentication(t *testing.T) {
	p := newPKI(t)
	srv := mtlsServer(t, p, nil)
	ex := newExecutor(t, &httpaction.Options{Client: trustingClient(t, srv)})

	for _, tt := range []struct {
		name string
		enc  *pkcs12.Encoder
	}{
		{"modern", pkcs12.Modern},
		{"legacy", pkcs12.LegacyDES},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cn := "client-" + tt.name
			res, err := execute(t, ex, certRequest(srv.URL, p.pfx(t, tt.enc, cn, "pfx-password"), "pfx-password"))
			if err != nil || !strings.Contains(res.Message, "\nBody: hello "+cn+"\n") {
				t.Errorf("Execute = %+v, %v; want the server to see %s", res, err, cn)
			}
		})
	}

	t.Run("wrong password", func(t *testing.T) {
		res, err := execute(t, ex, certRequest(srv.URL, p.pfx(t, pkcs12.Modern, "c", "pfx-password"), "not-the-password"))
		var fe *httpaction.FieldError
		if !errors.As(err, &fe) || fe.Path != "request.authentication.password" {
			t.Fatalf("Execute error = %v, want a *FieldError for request.authentication.password", err)
		}
		// Nothing was sent, and no retry opens the pfx.
		want := "Failed: action.request.authentication.password: does not open the pfx (incorrect password); nothing was sent to host '" + strings.TrimPrefix(srv.URL, "https://") + "'"
		if res == nil || res.Message != want {
			t.Errorf("Result = %+v, want message %q", res, want)
		}
		if !action.IsPermanent(err) {
			t.Errorf("Execute error %v is not permanent", err)
		}
		if strings.Contains(err.Error(), "not-the-password") || strings.Contains(err.Error(), "pfx-password") {
			t.Errorf("error leaks a password: %v", err)
		}
		var re *httpaction.RequestError
		if !errors.As(err, &re) {
			t.Errorf("Execute error = %T, want a *RequestError", err)
		}
	})

	t.Run("no certificate", func(t *testing.T) {
		res, err := execute(t, ex, newRequest("GET", srv.URL))
		var re *httpaction.RequestError
		if !errors.As(err, &re) {
			t.Fatalf("Execute error = %v, want a *RequestError", err)
		}
		if !strings.Contains(res.Message, "tls") {
			t.Errorf("Message = %q, want the TLS failure", res.Message)
		}
	})

	t.Run("untrusted certificate", func(t *testing.T) {
		other := newPKI(t)
		_, err := execute(t, ex, certRequest(srv.URL, other.pfx(t, pkcs12.Modern, "stranger", "pw12"), "pw12"))
		if err == nil {
			t.Errorf("Execute with a certificate of another CA succeeded")
		}
	})
}

// TestClientCertificateCache checks through connection counts that a
// certificate's transport is reused, and that the least recently used one
// is dropped when the cache is full.
func TestClientCertificateCache(t *testing.T) {
	p := newPKI(t)
	var conns atomic.Int32
	srv := mtlsServer(t, p, &conns)
	ex := newExecutor(t, &httpaction.Options{Client: trustingClient(t, srv), MaxCertificates: 1})
	a := p.pfx(t, pkcs12.Modern, "a", "pw-a")
	b := p.pfx(t, pkcs12.Modern, "b", "pw-b")

	run := func(pfx, password, cn string) {
		t.Helper()
		res, err := execute(t, ex, certRequest(srv.URL, pfx, password))
		if err != nil || !strings.Contains(res.Message, "\nBody: hello "+cn+"\n") {
			t.Fatalf("Execute as %s = %+v, %v", cn, res, err)
		}
	}
	run(a, "pw-a", "a")
	run(a, "pw-a", "a")
	run(a, "pw-a", "a")
	if n := conns.Load(); n != 1 {
		t.Errorf("3 requests with one certificate used %d connections, want 1", n)
	}
	run(b, "pw-b", "b") // evicts a
	run(a, "pw-a", "a") // a new transport for a
	if n := conns.Load(); n != 3 {
		t.Errorf("after switching certificates with MaxCertificates 1: %d connections, want 3", n)
	}
}

func TestReadCertificate(t *testing.T) {
	p := newPKI(t)
	cert, key := p.clientCert(t, "reader")
	data, err := pkcs12.Modern.Encode(key, cert, nil, "pw-read")
	if err != nil {
		t.Fatal(err)
	}
	got, err := httpaction.ReadCertificate(base64.StdEncoding.EncodeToString(data), "pw-read")
	if err != nil {
		t.Fatalf("ReadCertificate: %v", err)
	}
	sum := sha1.Sum(cert.Raw)
	want := httpaction.Certificate{
		Thumbprint:     strings.ToUpper(hex.EncodeToString(sum[:])),
		SubjectName:    "CN=reader,O=jobclock",
		ExpirationDate: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	if *got != want {
		t.Errorf("ReadCertificate = %+v, want %+v", *got, want)
	}
	if _, err := httpaction.ReadCertificate(base64.StdEncoding.EncodeToString(data), "bad"); err == nil {
		t.Errorf("ReadCertificate with a wrong password succeeded")
	}

	// Read again, as a put reads it twice (to check and to describe it):
	// the same description, a copy of its own, and still no description
	// for a wrong password.
	again, err := httpaction.ReadCertificate(base64.StdEncoding.EncodeToString(data), "pw-read")
	if err != nil || *again != want {
		t.Fatalf("ReadCertificate again = %+v, %v; want %+v", again, err, want)
	}
	again.SubjectName = "changed"
	if third, _ := httpaction.ReadCertificate(base64.StdEncoding.EncodeToString(data), "pw-read"); third.SubjectName != want.SubjectName {
		t.Errorf("a change to a description ReadCertificate returned shows in the next: %q", third.SubjectName)
	}
	if _, err := httpaction.ReadCertificate(base64.StdEncoding.EncodeToString(data), "bad"); err == nil {
		t.Errorf("ReadCertificate with a wrong password, after the right one, succeeded")
	}
}

const (
	tenant   = "tenant-1"
	clientID = "client-1"
	secret   = "client-secret-value"
	audience = "https://target.example/"
)

// tokenEndpoint serves the Azure AD v1 client-credentials flow for one
// client and counts the tokens it issues. expiry is the JSON of the
// expiry fields of its answers.
type tokenEndpoint struct {
	t       testing.TB
	fetches atomic.Int32
	expiry  string
	delay   time.Duration
}

func (te *tokenEndpoint) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	if r.Method != "POST" || r.URL.Path != "/"+tenant+"/oauth2/token" {
		te.t.Errorf("token request %s %s, want POST /%s/oauth2/token", r.Method, r.URL.Path, tenant)
		w.WriteHeader(nethttp.StatusNotFound)
		return
	}
	if err := r.ParseForm(); err != nil {
		te.t.Errorf("token request form: %v", err)
	}
	f := r.PostForm
	if f.Get("grant_type") != "client_credentials" || f.Get("client_id") != clientID || f.Get("resource") != audience {
		te.t.Errorf("token request form = %v", f)
	}
	if f.Get("client_secret") != secret {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(nethttp.StatusUnauthorized)
		// Echo the secret to check that it is redacted.
		json.NewEncoder(w).Encode(map[string]string{
			"error":             "invalid_client",
			"error_description": "AADSTS7000215: Invalid client secret provided: " + f.Get("client_secret"),
		})
		return
	}
	n := te.fetches.Add(1)
	if te.delay > 0 {
		time.Sleep(te.delay)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"token_type":"Bearer","access_token":"token-%d",%s}`, n, te.expiry)
}

// bearerTarget answers 200 to requests with a token from the endpoint and
// reports the token it saw in the body.
func bearerTarget(w nethttp.ResponseWriter, r *nethttp.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !strings.HasPrefix(tok, "token-") {
		w.WriteHeader(nethttp.StatusUnauthorized)
		return
	}
	// Not the token itself: messages redact it.
	fmt.Fprint(w, "n="+strings.TrimPrefix(tok, "token-"))
}

func oauthRequest(uri, authority, sec string) *action.Request {
	req := newRequest("GET", uri)
	req.Action.Request.Authentication = &action.Authentication{
		Type: action.AuthActiveDirectoryOAuth, Tenant: tenant, ClientID: clientID, Secret: sec, Audience: audience, Authority: authority,
	}
	return req
}

func TestActiveDirectoryOAuth(t *testing.T) {
	te := &tokenEndpoint{t: t, expiry: `"expires_in":"3599","expires_on":"1700000000"`}
	tokenSrv := newServer(t, te)
	target := newServer(t, nethttp.HandlerFunc(bearerTarget))
	ex := newExecutor(t, &httpaction.Options{Authority: tokenSrv.URL + "/"})

	for i := range 3 {
		res, err := execute(t, ex, oauthRequest(target.URL, "", secret))
		if err != nil || !strings.Contains(res.Message, "\nBody: n=1\n") {
			t.Fatalf("Execute #%d = %+v, %v; want success with token-1", i, res, err)
		}
	}
	if n := te.fetches.Load(); n != 1 {
		t.Errorf("3 attempts fetched %d tokens, want 1", n)
	}

	t.Run("authority of the action", func(t *testing.T) {
		ex := newExecutor(t, &httpaction.Options{Authority: "http://127.0.0.1:1/"}) // nothing there
		res, err := execute(t, ex, oauthRequest(target.URL, tokenSrv.URL, secret))
		if err != nil {
			t.Errorf("Execute = %+v, %v; want success", res, err)
		}
	})

	t.Run("refused", func(t *testing.T) {
		const wrong = "wrong-secret-value"
		res, err := execute(t, ex, oauthRequest(target.URL, "", wrong))
		var re *httpaction.RequestError
		if !errors.As(err, &re) {
			t.Fatalf("Execute error = %v, want a *RequestError", err)
		}
		tokenHost := strings.TrimPrefix(tokenSrv.URL, "http://")
		want := "Failed: action.request.authentication: token endpoint '" + tokenHost + "' answered 401 Unauthorized: invalid_client: AADSTS7000215: Invalid client secret provided: ***; nothing was sent to host '" + strings.TrimPrefix(target.URL, "http://") + "'"
		if res.Message != want {
			t.Errorf("Message = %q, want %q", res.Message, want)
		}
		if strings.Contains(res.Message+err.Error(), wrong) {
			t.Errorf("secret leaked: %q / %v", res.Message, err)
		}
	})

	t.Run("endpoint down", func(t *testing.T) {
		ex := newExecutor(t, &httpaction.Options{Authority: "http://127.0.0.1:1/"})
		res, err := execute(t, ex, oauthRequest(target.URL, "", secret))
		// The message says that the token request failed and that nothing
		// was sent to the target; the down endpoint is retried.
		prefix := "Failed: action.request.authentication: token request to '127.0.0.1:1' failed: "
		suffix := "; nothing was sent to host '" + strings.TrimPrefix(target.URL, "http://") + "'"
		if err == nil || !strings.HasPrefix(res.Message, prefix) || !strings.HasSuffix(res.Message, suffix) {
			t.Errorf("Execute = %+v, %v; want a message %q...%q", res, err, prefix, suffix)
		}
		if action.IsPermanent(err) {
			t.Errorf("Execute error %v is permanent; a token endpoint that is down may come back", err)
		}
	})
}

// inProcess is a transport that serves requests with handlers by host,
// without a network, so that tests can run in a synctest bubble.
type inProcess map[string]nethttp.Handler

func (m inProcess) RoundTrip(r *nethttp.Request) (*nethttp.Response, error) {
	h, ok := m[r.URL.Host]
	if !ok {
		return nil, fmt.Errorf("no route to %s", r.URL.Host)
	}
	if r.Body == nil {
		r.Body = nethttp.NoBody
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func TestActiveDirectoryOAuthExpiry(t *testing.T) {
	tests := []struct {
		name   string
		expiry string
		valid  time.Duration // how long a token is reused
	}{
		// 3600s less the 5 minute margin.
		{"expires_in string", `"expires_in":"3600"`, 3300 * time.Second},
		{"expires_in number", `"expires_in":3600`, 3300 * time.Second},
		// A short lifetime: the margin is capped at half of it.
		{"short expires_in", `"expires_in":60`, 30 * time.Second},
		// No lifetime: not cached.
		{"no lifetime", `"ext_expires_in":"3600"`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				te := &tokenEndpoint{t: t, expiry: tt.expiry}
				ex := httpaction.New(&httpaction.Options{
					Authority: "https://login.test/",
					Client:    &nethttp.Client{Transport: inProcess{"login.test": te, "target.test": nethttp.HandlerFunc(bearerTarget)}},
				})
				defer ex.Close()
				call := func(wantToken int) {
					t.Helper()
					res, err := ex.Execute(context.Background(), oauthRequest("https://target.test/", "", secret))
					want := fmt.Sprintf("\nBody: n=%d\n", wantToken)
					if err != nil || !strings.Contains(res.Message, want) {
						t.Fatalf("Execute = %+v, %v; want %q", res, err, want)
					}
				}
				call(1)
				if tt.valid == 0 {
					call(2)
					return
				}
				time.Sleep(tt.valid - time.Second)
				call(1)
				time.Sleep(2 * time.Second)
				call(2)
				call(2)
			})
		})
	}
}

// TestActiveDirectoryOAuthSharedFetch checks that concurrent attempts with
// the same credentials wait for one token request.
func TestActiveDirectoryOAuthSharedFetch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		te := &tokenEndpoint{t: t, expiry: `"expires_in":"3600"`, delay: time.Second}
		ex := httpaction.New(&httpaction.Options{
			Authority: "https://login.test/",
			Client:    &nethttp.Client{Transport: inProcess{"login.test": te, "target.test": nethttp.HandlerFunc(bearerTarget)}},
		})
		defer ex.Close()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				res, err := ex.Execute(context.Background(), oauthRequest("https://target.test/", "", secret))
				if err != nil || !strings.Contains(res.Message, "\nBody: n=1\n") {
					t.Errorf("Execute = %+v, %v; want token-1", res, err)
				}
			})
		}
		wg.Wait()
		if n := te.fetches.Load(); n != 1 {
			t.Errorf("8 concurrent attempts fetched %d tokens, want 1", n)
		}
	})
}

// TestActiveDirectoryOAuthTimeout checks that a slow token endpoint counts
// against the attempt's timeout.
func TestActiveDirectoryOAuthTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		te := &tokenEndpoint{t: t, expiry: `"expires_in":"3600"`, delay: 2 * time.Minute}
		ex := httpaction.New(&httpaction.Options{
			Authority: "https://login.test/",
			Client:    &nethttp.Client{Transport: ctxTransport{inProcess{"login.test": te}}},
		})
		defer ex.Close()
		start := time.Now()
		res, err := ex.Execute(context.Background(), oauthRequest("https://target.test/", "", secret))
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(res.Message, "timed out after 1m0s") {
			t.Errorf("Execute = %+v, %v; want a timeout", res, err)
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("Execute returned after %v, want 1m0s", d)
		}
		time.Sleep(time.Minute) // let the token endpoint finish
	})
}

// ctxTransport makes an in-process transport give up when the request's
// context ends, like a real one.
type ctxTransport struct{ next nethttp.RoundTripper }

func (c ctxTransport) RoundTrip(r *nethttp.Request) (*nethttp.Response, error) {
	type result struct {
		resp *nethttp.Response
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		resp, err := c.next.RoundTrip(r)
		ch <- result{resp, err}
	}()
	select {
	case res := <-ch:
		return res.resp, res.err
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// TestCloseReleasesConnections checks that Close closes the idle
// connections of the default transport and of certificate transports while
// the servers are still up.
func TestCloseReleasesConnections(t *testing.T) {
	p := newPKI(t)
	tlsSrv := mtlsServer(t, p, nil)
	plain := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {}))

	ex := httpaction.New(nil)
	if _, err := execute(t, ex, newRequest("GET", plain.URL)); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	client := trustingClient(t, tlsSrv)
	exTLS := httpaction.New(&httpaction.Options{Client: client})
	if _, err := execute(t, exTLS, certRequest(tlsSrv.URL, p.pfx(t, pkcs12.Modern, "c", "pw-close"), "pw-close")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if clientConns() == "" {
		t.Fatal("no client connections after two requests; the test cannot see them")
	}
	ex.Close()
	exTLS.Close()
	deadline := time.Now().Add(2 * time.Second)
	for clientConns() != "" {
		if time.Now().After(deadline) {
			t.Fatalf("connections left after Close:\n%s", clientConns())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
