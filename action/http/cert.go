package http

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	nethttp "net/http"
	"strings"
	"sync"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/lru"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// Certificate describes the client certificate of a ClientCertificate
// authentication, for display in place of the secret pfx.
type Certificate struct {
	// Thumbprint is the SHA-1 hash of the certificate in upper-case hex,
	// as Windows shows it.
	Thumbprint string
	// SubjectName is the subject distinguished name ("CN=client,O=Example").
	SubjectName string
	// ExpirationDate is the end of the certificate's validity (NotAfter).
	ExpirationDate time.Time
}

// ReadCertificate decodes pfx (the base64 of a PKCS#12 file, as in the
// "pfx" field) with password and describes its leaf certificate. Errors are
// *FieldError values naming request.authentication.pfx or
// request.authentication.password.
//
// The outcomes of the last readCacheSize pairs of pfx and password read
// are kept (the description or the error, never the private key), so that
// a job put is read once: by [ValidateRequest], which checks it with
// ReadCertificate, and by the scheduler, which describes it.
func ReadCertificate(pfx, password string) (*Certificate, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s:%s", len(pfx), pfx, password)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	read, _ := reads.GetOrCreate(key, func() (*certRead, error) { return new(certRead), nil })
	read.once.Do(func() { read.cert, read.err = readCertificate(pfx, password) })
	if read.err != nil {
		return nil, read.err
	}
	c := *read.cert
	return &c, nil
}

// readCacheSize bounds the outcomes of ReadCertificate kept.
const readCacheSize = 64

// reads holds the outcomes of ReadCertificate by the SHA-256 of its
// arguments.
var reads = lru.New[[sha256.Size]byte, *certRead](readCacheSize, nil)

// certRead is the outcome of a ReadCertificate, computed once.
type certRead struct {
	once sync.Once
	cert *Certificate
	err  error
}

// readCertificate is ReadCertificate without its cache.
func readCertificate(pfx, password string) (*Certificate, error) {
	cert, err := parsePfx(pfx, password)
	if err != nil {
		return nil, err
	}
	leaf := cert.Leaf
	sum := sha1.Sum(leaf.Raw)
	return &Certificate{
		Thumbprint:     strings.ToUpper(hex.EncodeToString(sum[:])),
		SubjectName:    leaf.Subject.String(),
		ExpirationDate: leaf.NotAfter.UTC(),
	}, nil
}

// parsePfx decodes the base64 PKCS#12 data in pfx into a TLS certificate
// with its chain. Errors never contain the password.
func parsePfx(pfx, password string) (*tls.Certificate, error) {
	data, err := decodeBase64(pfx)
	if err != nil {
		return nil, &FieldError{Path: "request.authentication.pfx", Reason: "is not valid base64: " + err.Error()}
	}
	if err := checkPfxWork(data, password); err != nil {
		return nil, err
	}
	key, leaf, chain, err := pkcs12.DecodeChain(data, password)
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword), errors.Is(err, pkcs12.ErrDecryption):
		return nil, &FieldError{Path: "request.authentication.password", Reason: "does not open the pfx (incorrect password)"}
	case err != nil && strings.HasPrefix(err.Error(), "pkcs12: error reading P12 data"):
		// The decoder's reason is a structure error of encoding/asn1,
		// which says nothing to a person.
		return nil, &FieldError{Path: "request.authentication.pfx", Reason: "is not a usable PKCS#12 file: its data is not a PKCS#12 structure (give the base64 of a .pfx or .p12 file)"}
	case err != nil:
		return nil, &FieldError{Path: "request.authentication.pfx", Reason: "is not a usable PKCS#12 file: " + strings.TrimPrefix(err.Error(), "pkcs12: ")}
	case key == nil || leaf == nil:
		return nil, &FieldError{Path: "request.authentication.pfx", Reason: "holds no certificate with a private key"}
	}
	c := &tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, ca := range chain {
		c.Certificate = append(c.Certificate, ca.Raw)
	}
	return c, nil
}

// decodeBase64 accepts standard base64 with or without padding and
// ignores whitespace (line breaks of PEM-style wrapping).
func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

// certClient returns a client whose transport presents the certificate of
// a, making and caching it on first use.
func (e *Executor) certClient(a *action.Authentication) (*nethttp.Client, error) {
	if e.baseTLS == nil {
		return nil, fmt.Errorf("ClientCertificate authentication needs a *net/http.Transport: %s", e.baseTLSErr)
	}
	h := sha256.New()
	h.Write([]byte(a.Pfx))
	h.Write([]byte{0})
	h.Write([]byte(a.Password))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if c, ok := e.certs.Get(key); ok {
		return c, nil
	}
	cert, err := parsePfx(a.Pfx, a.Password)
	if err != nil {
		return nil, err
	}
	tr := e.baseTLS.(*nethttp.Transport).Clone()
	if tr.IdleConnTimeout <= 0 {
		// An evicted transport may still get a connection back from a
		// request in flight; make sure that connection does not idle
		// forever.
		tr.IdleConnTimeout = 90 * time.Second
	}
	cfg := tr.TLSClientConfig
	if cfg == nil {
		cfg = &tls.Config{}
	} else {
		cfg = cfg.Clone()
	}
	cfg.Certificates = []tls.Certificate{*cert}
	cfg.GetClientCertificate = nil
	tr.TLSClientConfig = cfg
	c := *e.client
	c.Transport = tr
	// Another attempt may have cached the same certificate meanwhile; use
	// that one (this transport has no connections yet).
	cached, _ := e.certs.Add(key, &c)
	return cached, nil
}

// newCertCache returns a cache of certificate clients; an evicted client's
// idle connections (those of its own transport) are closed, while
// requests in flight keep theirs.
func newCertCache(size int) *lru.Cache[[sha256.Size]byte, *nethttp.Client] {
	return lru.New(size, func(_ [sha256.Size]byte, c *nethttp.Client) { c.CloseIdleConnections() })
}
