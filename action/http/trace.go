package http

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jobclock/scheduler/internal/tracectx"
)

// scope is the instrumentation scope of the executor's spans.
const scope = "github.com/jobclock/scheduler/action/http"

// spanAttributes describes a request with the OpenTelemetry HTTP client
// conventions.
func spanAttributes(p *prepared) []tracectx.Attr {
	host, port := p.u.Hostname(), p.u.Port()
	scheme := strings.ToLower(p.u.Scheme)
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	n, _ := strconv.Atoi(port)
	return []tracectx.Attr{
		tracectx.String("http.request.method", p.method),
		tracectx.String("server.address", host),
		tracectx.Int("server.port", n),
		tracectx.String("url.scheme", scheme),
		tracectx.String("url.full", redactedURL(p.u)),
	}
}

// redactedURL returns u without user information and with the value of
// every query parameter replaced by REDACTED: job URIs may carry keys and
// signatures there.
func redactedURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.UserPassword("REDACTED", "REDACTED")
	}
	if c.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(c.RawQuery, "&") {
			k, _, found := strings.Cut(kv, "=")
			if found {
				k += "=REDACTED"
			}
			parts = append(parts, k)
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// endSpan ends the client span of a request: with the response's status
// code, and as an error for a status of 400 or more (error.type is the
// code) or no response (error.type is the error's type).
func endSpan(span tracectx.Span, status int, err error) {
	errType := ""
	var attrs []tracectx.Attr
	if status != 0 {
		attrs = []tracectx.Attr{tracectx.Int("http.response.status_code", status)}
		if status >= 400 {
			errType = strconv.Itoa(status)
		}
	}
	var ne net.Error
	if err != nil && status == 0 && errors.As(err, &ne) && ne.Timeout() {
		errType = "timeout"
	}
	tracectx.End(span, err, errType, attrs...)
}
