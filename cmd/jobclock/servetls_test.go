package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobclock/scheduler/httpapi"
)

// certPair is a self-signed certificate for 127.0.0.1 in PEM files.
type certPair struct {
	cert     *x509.Certificate
	certPEM  []byte
	keyPEM   []byte
	serialNo int64
}

func newCertPair(t *testing.T, serial int64) *certPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: fmt.Sprintf("jobclock test %d", serial)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &certPair{
		cert:     cert,
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
		serialNo: serial,
	}
}

// install writes the pair to certFile and keyFile the way deployment tools
// do: each file written aside and renamed into place.
func (p *certPair) install(t *testing.T, certFile, keyFile string) {
	t.Helper()
	for _, f := range []struct {
		name string
		data []byte
	}{{keyFile, p.keyPEM}, {certFile, p.certPEM}} {
		tmp := f.name + ".new"
		if err := os.WriteFile(tmp, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f.name); err != nil {
			t.Fatal(err)
		}
	}
}

// servedSerial connects to addr (host:port) over TLS, trusting the given
// certificates, and returns the serial number of the certificate served.
func servedSerial(addr string, trusted ...*certPair) (int64, error) {
	pool := x509.NewCertPool()
	for _, p := range trusted {
		pool.AddCert(p.cert)
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(), nil
}

// loopbackAddr turns the address serve printed into one to dial.
func loopbackAddr(t *testing.T, rawURL string) string {
	t.Helper()
	_, hostport, ok := strings.Cut(rawURL, "://")
	if !ok {
		t.Fatalf("serve printed %q, not a URL", rawURL)
	}
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + port
}

// waitServed waits until a new connection to addr is served the
// certificate of want.
func waitServed(t *testing.T, addr string, want *certPair, trusted ...*certPair) {
	t.Helper()
	eventually(t, fmt.Sprintf("certificate %d is served", want.serialNo), func() error {
		n, err := servedSerial(addr, trusted...)
		if err == nil && n != want.serialNo {
			err = fmt.Errorf("serial %d", n)
		}
		return err
	})
}

// waitLog waits until the part of serve's log after from contains text.
func waitLog(t *testing.T, srv *server, from int, text string) {
	t.Helper()
	eventually(t, fmt.Sprintf("the log says %q", text), func() error {
		if !strings.Contains(srv.stderr.String()[from:], text) {
			return errors.New("not yet")
		}
		return nil
	})
}

func writeTokens(t *testing.T, dir string) (file, token string) {
	t.Helper()
	token = "tls-token-0123456789abcdef"
	file = filepath.Join(dir, "tokens")
	if err := os.WriteFile(file, []byte(token+" sub-tls\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, token
}

// TestServeTLS runs "jobclock serve" with TLS on a non-loopback address
// with tokens: the API answers over HTTPS with the served certificate, a
// pair replaced on disk is picked up without a restart, and a broken new
// pair keeps the previous certificate and is logged.
func TestServeTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first, second := newCertPair(t, 1001), newCertPair(t, 1002)
	first.install(t, certFile, keyFile)
	tokens, token := writeTokens(t, dir)

	bin := buildJobclock(t)
	srv := startServe(t, bin, "-addr", "0.0.0.0:0", "-db", filepath.Join(dir, "x.db"), "-tokens", tokens,
		"-tls-cert", certFile, "-tls-key", keyFile, "-tls-reload-interval", "100ms")
	if !strings.HasPrefix(srv.url, "https://") {
		t.Fatalf("serve printed %q, want an https URL", srv.url)
	}
	addr := loopbackAddr(t, srv.url)

	// The API over HTTPS, with the client trusting only the served
	// certificate.
	pool := x509.NewCertPool()
	pool.AddCert(first.cert)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	c := httpapi.NewClient("https://"+addr, &httpapi.ClientOptions{Token: token, HTTPClient: hc})
	ref := httpapi.CollectionRef{Subscription: "sub-tls", ResourceGroup: "rg", Collection: "jc"}
	if _, created, err := c.PutCollection(context.Background(), ref, nil, nil); err != nil || !created {
		t.Fatalf("PutCollection over HTTPS = %v, %v", created, err)
	}
	hc.CloseIdleConnections()
	if n, err := servedSerial(addr, first); err != nil || n != first.serialNo {
		t.Fatalf("served serial = %d, %v; want %d", n, err, first.serialNo)
	}
	// Plain HTTP on the TLS port is not served.
	if resp, err := http.Get("http://" + addr + "/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port: status %d, want 400", resp.StatusCode)
		}
	}

	// Replaced files are picked up.
	second.install(t, certFile, keyFile)
	waitServed(t, addr, second, first, second)

	// A broken pair (this key does not match the certificate) leaves the
	// previous certificate in use and says why.
	logged := len(srv.stderr.String())
	if err := os.WriteFile(keyFile, first.keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	waitLog(t, srv, logged, "keeping the previous certificate")
	if n, err := servedSerial(addr, first, second); err != nil || n != second.serialNo {
		t.Errorf("after a broken pair: served serial = %d, %v; want the previous %d", n, err, second.serialNo)
	}
	if log := srv.stderr.String()[logged:]; !strings.Contains(log, "private key does not match public key") {
		t.Errorf("log does not give the reason:\n%s", log)
	}
	srv.stop(t)
}

// TestServeTLSReloadOnSIGHUP: with file checks off, a replaced pair is
// served after SIGHUP, and a broken one is refused on SIGHUP too.
func TestServeTLSReloadOnSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first, second := newCertPair(t, 2001), newCertPair(t, 2002)
	first.install(t, certFile, keyFile)
	tokens, _ := writeTokens(t, dir)
	srv := startServe(t, buildJobclock(t), "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "x.db"), "-tokens", tokens,
		"-tls-cert", certFile, "-tls-key", keyFile, "-tls-reload-interval", "0")
	addr := loopbackAddr(t, srv.url)

	second.install(t, certFile, keyFile)
	if n, err := servedSerial(addr, first, second); err != nil || n != first.serialNo {
		t.Fatalf("before SIGHUP: served serial = %d, %v; want %d (files are not watched)", n, err, first.serialNo)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitServed(t, addr, second, first, second)
	// The line is written before the new pair is served, but reaches the
	// test through a pipe: wait for it.
	waitLog(t, srv, 0, "reason=SIGHUP")

	logged := len(srv.stderr.String())
	if err := os.WriteFile(certFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, srv, logged, "keeping the previous certificate")
	if n, err := servedSerial(addr, first, second); err != nil || n != second.serialNo {
		t.Errorf("after SIGHUP with a broken pair: served serial = %d, %v; want %d", n, err, second.serialNo)
	}
	srv.stop(t)
}

// TestServeRefusesPlaintextTokens: tokens on a non-loopback address need
// TLS or the explicit override.
func TestServeRefusesPlaintextTokens(t *testing.T) {
	dir := t.TempDir()
	tokens, token := writeTokens(t, dir)
	var out, errb bytes.Buffer
	code := serveCmd([]string{"-addr", "0.0.0.0:0", "-db", filepath.Join(dir, "x.db"), "-tokens", tokens}, &out, &errb)
	if code != 2 {
		t.Fatalf("serve -addr 0.0.0.0:0 -tokens without TLS = %d, want 2", code)
	}
	for _, want := range []string{"refusing to accept bearer tokens over plain HTTP", "-tls-cert", "-tls-key", "-allow-plaintext-tokens"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr = %q, want it to mention %q", errb.String(), want)
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q; nothing should be served", out.String())
	}
	if testing.Short() {
		return
	}
	// The override starts it, over plain HTTP.
	srv := startServe(t, buildJobclock(t), "-addr", "0.0.0.0:0", "-db", filepath.Join(dir, "y.db"), "-tokens", tokens, "-allow-plaintext-tokens")
	c := httpapi.NewClient("http://"+loopbackAddr(t, srv.url), &httpapi.ClientOptions{Token: token})
	ref := httpapi.CollectionRef{Subscription: "sub-tls", ResourceGroup: "rg", Collection: "jc"}
	if _, _, err := c.PutCollection(context.Background(), ref, nil, nil); err != nil {
		t.Errorf("PutCollection with -allow-plaintext-tokens: %v", err)
	}
	srv.stop(t)
}

// TestServeThrottleFlags: the budgets given on the command line are the
// API's.
func TestServeThrottleFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	tokens, token := writeTokens(t, dir)
	srv := startServe(t, buildJobclock(t), "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "x.db"), "-tokens", tokens,
		"-throttle-reads", "2", "-throttle-writes", "50", "-throttle-window", "1h")
	get := func() *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.url+"/subscriptions/sub-tls/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc?api-version=2016-03-01", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get(); r.Header.Get(httpapi.HeaderRemainingReads) != "1" {
		t.Errorf("first read: %s = %q, want 1", httpapi.HeaderRemainingReads, r.Header.Get(httpapi.HeaderRemainingReads))
	}
	get()
	if r := get(); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "1800" {
		t.Errorf("third read: status %d, Retry-After %q; want 429, 1800 (2 reads an hour)", r.StatusCode, r.Header.Get("Retry-After"))
	}
	srv.stop(t)
}
