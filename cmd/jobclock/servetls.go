package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// serveTLS are the TLS flags of serve.
type serveTLS struct {
	cert, key       string
	reloadInterval  time.Duration
	plaintextTokens bool
}

func addTLSFlags(fs *flag.FlagSet) *serveTLS {
	t := new(serveTLS)
	fs.StringVar(&t.cert, "tls-cert", "", "serve HTTPS with the certificate (chain) in this PEM `file`; needs -tls-key")
	fs.StringVar(&t.key, "tls-key", "", "PEM `file` of the private key of -tls-cert")
	fs.DurationVar(&t.reloadInterval, "tls-reload-interval", time.Second, "how often the -tls-cert and -tls-key files are checked for changes (0: only on SIGHUP)")
	fs.BoolVar(&t.plaintextTokens, "allow-plaintext-tokens", false, "accept bearer tokens over plain HTTP on a non-loopback -addr (only behind a proxy that terminates TLS)")
	return t
}

// check reports a usage error in the TLS flags.
func (t *serveTLS) check() error {
	switch {
	case (t.cert == "") != (t.key == ""):
		return errors.New("-tls-cert and -tls-key go together")
	case t.reloadInterval < 0:
		return errors.New("-tls-reload-interval is negative")
	}
	return nil
}

func (t *serveTLS) enabled() bool { return t.cert != "" }

// refusePlaintext explains why serve will not start when bearer tokens
// would cross the network unencrypted; empty when it may start.
func (t *serveTLS) refusePlaintext(addr string, tokens bool) string {
	if !tokens || t.enabled() || t.plaintextTokens || serveLoopback(addr) {
		return ""
	}
	return fmt.Sprintf("refusing to accept bearer tokens over plain HTTP on %s, where they would cross the network in clear text: "+
		"give -tls-cert FILE and -tls-key FILE to serve HTTPS, or -allow-plaintext-tokens if a proxy in front terminates TLS, "+
		"or use a loopback address such as 127.0.0.1:8080", addr)
}

// certReloader serves a certificate from a pair of PEM files and loads
// them anew when they change or on SIGHUP. A pair that does not load
// leaves the previous certificate in use, and the reason is logged.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu     sync.RWMutex
	cert   *tls.Certificate
	loaded fileStamp // the files when last loaded
	failed fileStamp // the files when they last failed to load
}

// newCertReloader loads the pair; an error means serve cannot start.
func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	c := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	stamp := c.stamp()
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert %s, -tls-key %s: %w", certFile, keyFile, err)
	}
	c.cert, c.loaded = &cert, stamp
	return c, nil
}

// GetCertificate is the tls.Config hook.
func (c *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cert, nil
}

// fileStamp identifies the contents of the two files: each file (a file
// replaced by a rename is another file), its size and modification time.
// A nil entry is a file that could not be read.
type fileStamp [2]os.FileInfo

func (c *certReloader) stamp() fileStamp {
	var s fileStamp
	for i, name := range []string{c.certFile, c.keyFile} {
		s[i], _ = os.Stat(name)
	}
	return s
}

func (s fileStamp) equal(o fileStamp) bool {
	for i := range s {
		a, b := s[i], o[i]
		if a == nil || b == nil {
			if a != b {
				return false
			}
			continue
		}
		if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
			return false
		}
	}
	return true
}

// reload loads the pair; force loads it even when the files look
// unchanged (SIGHUP).
func (c *certReloader) reload(force bool, why string) {
	stamp := c.stamp()
	c.mu.RLock()
	same, failedBefore := stamp.equal(c.loaded), stamp.equal(c.failed)
	c.mu.RUnlock()
	if !force && (same || failedBefore) {
		return
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.log.Error("tls: the certificate files do not load; keeping the previous certificate",
			"reason", why, "tls_cert", c.certFile, "tls_key", c.keyFile, "err", err)
		c.failed = stamp
		return
	}
	c.cert, c.loaded, c.failed = &cert, stamp, fileStamp{}
	attrs := []any{"reason", why, "tls_cert", c.certFile}
	if cert.Leaf != nil {
		attrs = append(attrs, "subject", cert.Leaf.Subject.String(), "not_after", cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	c.log.Info("tls: certificate loaded", attrs...)
}

// start reloads the pair on SIGHUP and, every interval (when positive),
// when the files have changed, until ctx ends. SIGHUP is caught from the
// moment start returns.
func (c *certReloader) start(ctx context.Context, interval time.Duration) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	var tick <-chan time.Time
	var ticker *time.Ticker
	if interval > 0 {
		ticker = time.NewTicker(interval)
		tick = ticker.C
	}
	go func() {
		defer signal.Stop(hup)
		if ticker != nil {
			defer ticker.Stop()
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				c.reload(true, "SIGHUP")
			case <-tick:
				c.reload(false, "files changed")
			}
		}
	}()
}
