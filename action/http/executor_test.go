package http_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/retry"
)

func TestExecuteStatus(t *testing.T) {
	srv := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		code := 0
		fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/"), &code)
		if code >= 300 && code < 400 {
			w.Header().Set("Location", "/200")
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		if code != nethttp.StatusNoContent {
			fmt.Fprintf(w, "answer %d", code)
		}
	}))
	host := strings.TrimPrefix(srv.URL, "http://")
	ex := newExecutor(t, nil)

	tests := []struct {
		code    int
		ok      bool
		message string // wanted prefix of Result.Message
	}{
		{200, true, "Completed: 200 OK from host '" + host + "'\n"},
		{201, true, "Completed: 201 Created from host '" + host + "'\n"},
		{204, true, "Completed: 204 No Content from host '" + host + "'\n"},
		{301, false, "Failed: 301 Moved Permanently from host '" + host + "'\n"},
		{302, false, "Failed: 302 Found from host '" + host + "'\n"},
		{400, false, "Failed: 400 Bad Request from host '" + host + "'\n"},
		{404, false, "Failed: 404 Not Found from host '" + host + "'\n"},
		{500, false, "Failed: 500 Internal Server Error from host '" + host + "'\n"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			res, err := execute(t, ex, newRequest("GET", fmt.Sprintf("%s/%d", srv.URL, tt.code)))
			if res == nil {
				t.Fatalf("Execute returned a nil Result (err %v)", err)
			}
			if !strings.HasPrefix(res.Message, tt.message) {
				t.Errorf("Message = %q, want prefix %q", res.Message, tt.message)
			}
			if !strings.Contains(res.Message, "\nHeaders:\n") || !strings.Contains(res.Message, "\n  Content-Type: text/plain") {
				t.Errorf("Message = %q, want the response headers, one per line", res.Message)
			}
			if strings.Contains(res.Message, "\r") {
				t.Errorf("Message = %q, want no CR", res.Message)
			}
			if err != nil && !strings.Contains(res.Message, err.Error()) {
				t.Errorf("Message = %q does not contain the error %q: the history would say the status twice", res.Message, err)
			}
			wantBody := fmt.Sprintf("'\nBody: answer %d\nHeaders:\n", tt.code)
			if tt.code == 204 {
				wantBody = "'\nHeaders:\n" // no body, no Body line
			}
			if !strings.Contains(res.Message, wantBody) {
				t.Errorf("Message = %q, want the body before the headers: %q", res.Message, wantBody)
			}
			if tt.ok {
				if err != nil {
					t.Errorf("Execute error = %v, want nil", err)
				}
				return
			}
			var se *httpaction.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("Execute error = %v, want a *StatusError", err)
			}
			if se.StatusCode != tt.code || se.Host != host {
				t.Errorf("StatusError = %+v, want code %d host %s", se, tt.code, host)
			}
			if tt.code >= 300 && tt.code < 400 && strings.Contains(res.Message, "answer 200") {
				t.Errorf("redirect was followed: %q", res.Message)
			}
		})
	}
}

func TestExecuteSendsRequest(t *testing.T) {
	type seen struct {
		Method, Path, Body, Host, UA string
		Headers                      map[string]string
	}
	got := make(chan seen, 1)
	srv := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		s := seen{Method: r.Method, Path: r.URL.RequestURI(), Body: readAll(t, r.Body), Host: r.Host, UA: r.UserAgent(), Headers: map[string]string{}}
		for _, h := range []string{
			"x-ms-scheduler-jobid", "x-ms-scheduler-jobcollectionid", "x-ms-scheduler-expected-execution-time",
			"x-ms-scheduler-execution-tag", "x-ms-client-request-id", "Content-Type", "X-Custom",
		} {
			if vs := r.Header.Values(h); len(vs) > 0 {
				s.Headers[h] = strings.Join(vs, "|")
			}
		}
		got <- s
	}))
	ex := newExecutor(t, nil)
	req := newRequest("post", srv.URL+"/hook?x=1")
	req.Action.Request.Body = `{"hello":"world"}`
	req.Action.Request.Headers = map[string]string{
		"Content-Type": "application/json",
		"X-Custom":     "custom value",
		// The scheduler's headers cannot be overridden.
		"X-MS-Scheduler-JobId":   "forged",
		"x-ms-client-request-id": "forged",
		"Host":                   "example.com",
	}
	if _, err := execute(t, ex, req); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	want := seen{
		Method: "POST", Path: "/hook?x=1", Body: `{"hello":"world"}`, Host: "example.com", UA: httpaction.DefaultUserAgent,
		Headers: map[string]string{
			"x-ms-scheduler-jobid":                   "reports/nightly",
			"x-ms-scheduler-jobcollectionid":         "reports",
			"x-ms-scheduler-expected-execution-time": "2026-11-21T22:00:00Z",
			"x-ms-scheduler-execution-tag":           "tag-0001",
			"x-ms-client-request-id":                 "req-0001",
			"Content-Type":                           "application/json",
			"X-Custom":                               "custom value",
		},
	}
	if diff := cmp.Diff(want, <-got); diff != "" {
		t.Errorf("request received (-want +got):\n%s", diff)
	}
}

// TestExecuteExpectedTimeUTC checks that a non-UTC expected time is sent
// in UTC.
func TestExecuteExpectedTimeUTC(t *testing.T) {
	got := make(chan string, 1)
	srv := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		got <- r.Header.Get("x-ms-scheduler-expected-execution-time")
	}))
	ex := newExecutor(t, nil)
	req := newRequest("GET", srv.URL)
	req.ExpectedTime = time.Date(2026, 11, 21, 23, 30, 0, 0, time.FixedZone("CET", 3600))
	if _, err := execute(t, ex, req); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if g, w := <-got, "2026-11-21T22:30:00Z"; g != w {
		t.Errorf("expected-execution-time = %q, want %q", g, w)
	}
}

// TestExecuteWireHeaderNames reads the raw request to check that the
// scheduler's headers are spelled in lower case on the wire.
func TestExecuteWireHeaderNames(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lines := make(chan []string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			lines <- nil
			return
		}
		defer c.Close()
		var ls []string
		br := bufio.NewReader(c)
		for {
			l, err := br.ReadString('\n')
			if err != nil || l == "\r\n" {
				break
			}
			ls = append(ls, strings.TrimRight(l, "\r\n"))
		}
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		lines <- ls
	}()
	ex := newExecutor(t, nil)
	if _, err := execute(t, ex, newRequest("GET", "http://"+ln.Addr().String()+"/")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	raw := strings.Join(<-lines, "\n")
	for _, h := range []string{
		"x-ms-scheduler-jobid: reports/nightly", "x-ms-scheduler-jobcollectionid: reports",
		"x-ms-scheduler-expected-execution-time: 2026-11-21T22:00:00Z", "x-ms-scheduler-execution-tag: tag-0001",
		"x-ms-client-request-id: req-0001",
	} {
		if !strings.Contains(raw, "\n"+h+"\n") && !strings.HasSuffix(raw, "\n"+h) {
			t.Errorf("raw request lacks line %q:\n%s", h, raw)
		}
	}
}

func TestExecuteTimeout(t *testing.T) {
	srv := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	host := strings.TrimPrefix(srv.URL, "http://")
	ex := newExecutor(t, &httpaction.Options{Timeout: 100 * time.Millisecond})
	start := time.Now()
	res, err := execute(t, ex, newRequest("GET", srv.URL))
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Execute took %v, want about 100ms", elapsed)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Execute error = %v, want one wrapping context.DeadlineExceeded", err)
	}
	want := "Failed: no response from host '" + host + "': timed out after 100ms"
	if res == nil || !strings.HasPrefix(res.Message, want) {
		t.Errorf("Result = %+v, want message %q", res, want)
	}

	// The action's own timeout replaces Options.Timeout.
	ex1 := newExecutor(t, &httpaction.Options{Timeout: time.Hour})
	req := newRequest("GET", srv.URL)
	req.Action.Timeout = retry.Duration(time.Second)
	res, err = execute(t, ex1, req)
	if want := "Failed: no response from host '" + host + "': timed out after 1s"; !errors.Is(err, context.DeadlineExceeded) || res == nil || !strings.HasPrefix(res.Message, want) {
		t.Errorf("Execute of an action with a 1 s timeout = %+v, %v; want message %q", res, err, want)
	}

	// A deadline of the caller's context that comes first is reported as such.
	ex2 := newExecutor(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err = ex2.Execute(ctx, newRequest("GET", srv.URL))
	if !errors.Is(err, context.DeadlineExceeded) || res == nil || !strings.Contains(res.Message, "timed out (the attempt's deadline passed)") {
		t.Errorf("Execute = %+v, %v; want a deadline failure", res, err)
	}

	// Cancellation is not a timeout.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	res, err = ex2.Execute(ctx, newRequest("GET", srv.URL))
	if !errors.Is(err, context.Canceled) || res == nil || !strings.Contains(res.Message, "': canceled") {
		t.Errorf("Execute = %+v, %v; want a cancellation failure", res, err)
	}
}

func TestExecuteConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	ex := newExecutor(t, nil)
	res, err := execute(t, ex, newRequest("GET", "http://"+addr+"/x"))
	var re *httpaction.RequestError
	if !errors.As(err, &re) || re.Host != addr {
		t.Fatalf("Execute error = %v, want a *RequestError for host %s", err, addr)
	}
	want := "Failed: no response from host '" + addr + "': "
	if res == nil || !strings.HasPrefix(res.Message, want) || !strings.HasSuffix(res.Message, "connection refused") {
		t.Errorf("Result = %+v, want %q ... connection refused", res, want)
	}
}

func TestExecuteMessageTruncation(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		max      int
		wantBody string
	}{
		{"fits", strings.Repeat("a", 2048), 0, strings.Repeat("a", 2048)},
		{"one over", strings.Repeat("a", 2049), 0, strings.Repeat("a", 2048) + "... (truncated)"},
		{"large", strings.Repeat("b", 1<<20), 0, strings.Repeat("b", 2048) + "... (truncated)"},
		// "é" is 2 bytes: 2047 a's, then é would end at byte 2049.
		{"rune at limit", strings.Repeat("a", 2047) + "é" + "z", 0, strings.Repeat("a", 2047) + "... (truncated)"},
		// "€" is 3 bytes starting at byte 2046 ends at 2049.
		{"3-byte rune at limit", strings.Repeat("a", 2046) + "€z", 0, strings.Repeat("a", 2046) + "... (truncated)"},
		{"rune ends at limit", strings.Repeat("a", 2046) + "é" + "z", 0, strings.Repeat("a", 2046) + "é... (truncated)"},
		{"custom max", "0123456789", 4, "0123... (truncated)"},
		{"no body", "0123456789", -1, "... (truncated)"},
		{"invalid utf-8", "ab\xffcd", 0, "ab\uFFFDcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
				w.WriteHeader(nethttp.StatusInternalServerError)
				fmt.Fprint(w, tt.body)
			}))
			ex := newExecutor(t, &httpaction.Options{MaxMessageBody: tt.max})
			res, err := execute(t, ex, newRequest("GET", srv.URL))
			if err == nil || res == nil {
				t.Fatalf("Execute = %v, %v; want a failure with a result", res, err)
			}
			_, body, ok := strings.Cut(res.Message, "\nBody: ")
			if !ok {
				t.Fatalf("Message %q has no body", res.Message)
			}
			body, _, _ = strings.Cut(body, "\nHeaders:")
			if body != tt.wantBody {
				t.Errorf("body in message = %q (%d bytes), want %q (%d bytes)", body, len(body), tt.wantBody, len(tt.wantBody))
			}
			if !utf8.ValidString(res.Message) {
				t.Errorf("Message is not valid UTF-8")
			}
		})
	}
}

// TestExecuteReusesConnections checks that a body longer than the message
// keeps is drained, so that the next request reuses the connection.
func TestExecuteReusesConnections(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		fmt.Fprint(w, strings.Repeat("x", 10000))
	}))
	srv.Config.ConnState = func(_ net.Conn, s nethttp.ConnState) {
		if s == nethttp.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	ex := newExecutor(t, nil)
	for range 5 {
		if _, err := execute(t, ex, newRequest("GET", srv.URL)); err != nil {
			t.Fatalf("Execute: %v", err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("5 sequential requests used %d connections, want 1", n)
	}
}

func TestExecuteInputErrors(t *testing.T) {
	ex := newExecutor(t, nil)
	if res, err := ex.Execute(context.Background(), nil); err == nil || res != nil {
		t.Errorf("Execute(nil) = %v, %v; want nil, error", res, err)
	}
	if _, err := ex.Execute(context.Background(), &action.Request{}); err == nil {
		t.Errorf("Execute(no action) error = nil")
	}

	tests := []struct {
		name   string
		req    *action.HTTPRequest
		path   string
		reason string
	}{
		{"no request", nil, "request", "is required"},
		{"no uri", &action.HTTPRequest{Method: "GET"}, "request.uri", "is required"},
		{"relative uri", &action.HTTPRequest{URI: "/path", Method: "GET"}, "request.uri", "absolute http or https"},
		{"ftp uri", &action.HTTPRequest{URI: "ftp://example.com/", Method: "GET"}, "request.uri", "absolute http or https"},
		{"bad uri", &action.HTTPRequest{URI: "http://exa mple.com:x/", Method: "GET"}, "request.uri", "not a valid URL"},
		{"no method", &action.HTTPRequest{URI: "http://127.0.0.1:1/"}, "request.method", "is required"},
		{"bad method", &action.HTTPRequest{URI: "http://127.0.0.1:1/", Method: "GE T"}, "request.method", "invalid method"},
		{"unknown auth", &action.HTTPRequest{URI: "http://127.0.0.1:1/", Method: "GET",
			Authentication: &action.Authentication{Type: "Kerberos"}}, "request.authentication.type", "not an authentication type"},
		{"cert over http", &action.HTTPRequest{URI: "http://127.0.0.1:1/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthClientCertificate, Pfx: "AAAA"}}, "request.authentication.type", "needs an https uri"},
		{"no pfx", &action.HTTPRequest{URI: "https://127.0.0.1:1/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthClientCertificate}}, "request.authentication.pfx", "is required"},
		{"bad base64", &action.HTTPRequest{URI: "https://127.0.0.1:1/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthClientCertificate, Pfx: "not base64!", Password: "hunter22"}}, "request.authentication.pfx", "not valid base64"},
		{"not pkcs12", &action.HTTPRequest{URI: "https://127.0.0.1:1/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthClientCertificate, Pfx: "aGVsbG8gd29ybGQ=", Password: "hunter22"}}, "request.authentication.pfx", "not a usable PKCS#12 file"},
		{"oauth without secret", &action.HTTPRequest{URI: "https://127.0.0.1:1/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthActiveDirectoryOAuth, Tenant: "t", Audience: "a", ClientID: "c"}}, "request.authentication.secret", "is required"},
		{"oauth bad authority", &action.HTTPRequest{URI: "https://127.0.0.1:1/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthActiveDirectoryOAuth, Tenant: "t", Audience: "a", ClientID: "c", Secret: "s3cr3t-value", Authority: "login"}}, "request.authentication.authority", "absolute http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := newRequest("GET", "http://unused/")
			req.Action.Request = tt.req
			res, err := ex.Execute(context.Background(), req)
			var fe *httpaction.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Execute error = %v, want a *FieldError", err)
			}
			if fe.Path != tt.path || !strings.Contains(fe.Reason, tt.reason) {
				t.Errorf("FieldError = %+v, want path %q reason containing %q", fe, tt.path, tt.reason)
			}
			if res == nil || !strings.Contains(res.Message, tt.path) {
				t.Errorf("Result = %+v, want a message naming %s", res, tt.path)
			}
			for _, secret := range []string{"hunter22", "s3cr3t-value"} {
				if strings.Contains(err.Error(), secret) || (res != nil && strings.Contains(res.Message, secret)) {
					t.Errorf("secret %q leaked: %v / %+v", secret, err, res)
				}
			}
			if tt.path != "request.authentication.authority" {
				// ValidateRequest finds the same problem without sending.
				verr := httpaction.ValidateRequest(tt.req)
				if !errors.As(verr, &fe) || fe.Path != tt.path {
					t.Errorf("ValidateRequest error = %v, want a *FieldError for %s", verr, tt.path)
				}
			}
		})
	}
}

func TestValidateRequestValid(t *testing.T) {
	for _, r := range []*action.HTTPRequest{
		{URI: "http://example.com/", Method: "GET"},
		{URI: "https://example.com/a?b=c", Method: "post", Body: "x", Headers: map[string]string{"A": "b"}},
		{URI: "https://example.com/", Method: "PUT", Authentication: &action.Authentication{Type: action.AuthBasic, Username: "u", Password: "p"}},
		{URI: "https://example.com/", Method: "GET", Authentication: &action.Authentication{Type: "NotSpecified"}},
	} {
		if err := httpaction.ValidateRequest(r); err != nil {
			t.Errorf("ValidateRequest(%+v) = %v, want nil", r, err)
		}
	}
}

// TestExecuteURLCredentialsNotLeaked checks that a password in the uri does
// not reach the message of a failed attempt.
func TestExecuteURLCredentialsNotLeaked(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ex := newExecutor(t, nil)
	u := &url.URL{Scheme: "http", User: url.UserPassword("user", "pa55word"), Host: addr, Path: "/"}
	res, err := execute(t, ex, newRequest("GET", u.String()))
	if err == nil || res == nil {
		t.Fatalf("Execute = %v, %v; want a failure", res, err)
	}
	if strings.Contains(res.Message, "pa55word") || strings.Contains(err.Error(), "pa55word") {
		t.Errorf("password leaked: %q / %v", res.Message, err)
	}
}

func TestExecuteZeroExecutor(t *testing.T) {
	var zero httpaction.Executor
	if _, err := zero.Execute(context.Background(), newRequest("GET", "http://127.0.0.1:1/")); err == nil {
		t.Errorf("Execute on a zero Executor succeeded")
	}
	var nilEx *httpaction.Executor
	if _, err := nilEx.Execute(context.Background(), newRequest("GET", "http://127.0.0.1:1/")); err == nil {
		t.Errorf("Execute on a nil *Executor succeeded")
	}
}
