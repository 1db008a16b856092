package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

const (
	tokenA = "throttle-token-a-0123456789"
	tokenB = "throttle-token-b-0123456789"
)

// throttled returns a handler with token authentication and the given
// budgets.
func throttled(t *testing.T, th *httpapi.Throttle) http.Handler {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := httpapi.NewTokenAuth(tokenA + " sub1\n" + tokenB + " sub1")
	if err != nil {
		t.Fatal(err)
	}
	return httpapi.New(s, &httpapi.Options{Logger: log, Authenticator: auth, Throttle: th})
}

// call sends one request as token (none when empty) from addr and returns
// the response.
func call(h http.Handler, method, path, token, addr string) *httptest.ResponseRecorder {
	var body io.Reader
	if method == "PUT" {
		body = strings.NewReader(`{"location": "West Europe", "properties": {}}`)
	}
	r := httptest.NewRequest(method, path, body)
	r.RemoteAddr = addr
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func remaining(t *testing.T, rec *httptest.ResponseRecorder, header string) int {
	t.Helper()
	v := rec.Header().Get(header)
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s = %q, want a count (status %d)", header, v, rec.Code)
	}
	return n
}

// TestThrottleHeaders: every response, errors included, reports the
// caller's remaining budget of the request's kind, reads and writes apart.
func TestThrottleHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := throttled(t, &httpapi.Throttle{ReadsPerWindow: 100, WritesPerWindow: 10, Window: time.Hour})
		const addr = "192.0.2.1:4000"
		tests := []struct {
			method, path, token string
			status              int
			header              string
			want                int
		}{
			{"GET", jc1 + v, tokenA, 404, httpapi.HeaderRemainingReads, 99},
			{"PUT", jc1 + v, tokenA, 201, httpapi.HeaderRemainingWrites, 9},
			{"GET", jc1 + v, tokenA, 200, httpapi.HeaderRemainingReads, 98},
			{"GET", jc1, tokenA, 400, httpapi.HeaderRemainingReads, 97}, // no api-version
			{"DELETE", jc1 + "/jobs/nope" + v, tokenA, 404, httpapi.HeaderRemainingWrites, 8},
			{"POST", jc1 + "/disable" + v, tokenA, 200, httpapi.HeaderRemainingWrites, 7},
			{"GET", jc1 + v, tokenB, 200, httpapi.HeaderRemainingReads, 99}, // another token, its own budget
			{"GET", jc1 + v, "", 401, httpapi.HeaderRemainingReads, 99},     // no token: by address
			{"GET", jc1 + v, "wrong-token-0123456789", 401, httpapi.HeaderRemainingReads, 98},
		}
		for i, tt := range tests {
			rec := call(h, tt.method, tt.path, tt.token, addr)
			if rec.Code != tt.status {
				t.Fatalf("request %d (%s %s): status %d, want %d: %s", i, tt.method, tt.path, rec.Code, tt.status, rec.Body)
			}
			if got := remaining(t, rec, tt.header); got != tt.want {
				t.Errorf("request %d (%s %s): %s = %d, want %d", i, tt.method, tt.path, tt.header, got, tt.want)
			}
			other := httpapi.HeaderRemainingWrites
			if tt.header == other {
				other = httpapi.HeaderRemainingReads
			}
			if v := rec.Header().Get(other); v != "" {
				t.Errorf("request %d: %s = %q on a response of the other kind", i, other, v)
			}
		}
	})
}

// TestThrottle429AndRecovery uses up a budget: the next request gets 429
// with Retry-After and an ARM error body, the other kind is unaffected,
// and the budget refills as the window passes.
func TestThrottle429AndRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 6 writes per minute: one more every 10 seconds.
		h := throttled(t, &httpapi.Throttle{ReadsPerWindow: 1000, WritesPerWindow: 6, Window: time.Minute})
		const addr = "192.0.2.1:4000"
		for i := range 6 {
			if rec := call(h, "PUT", jc1+v, tokenA, addr); rec.Code/100 != 2 {
				t.Fatalf("write %d: status %d", i, rec.Code)
			}
		}
		rec := call(h, "PUT", jc1+v, tokenA, addr)
		if rec.Code != http.StatusTooManyRequests {
			t.Fatalf("7th write: status %d, want 429", rec.Code)
		}
		if got := rec.Header().Get("Retry-After"); got != "10" {
			t.Errorf("Retry-After = %q, want 10 (one write every 10s)", got)
		}
		if got := remaining(t, rec, httpapi.HeaderRemainingWrites); got != 0 {
			t.Errorf("remaining writes on the 429 = %d, want 0", got)
		}
		var body httpapi.ErrorResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if body.Error.Code != httpapi.CodeTooManyRequests || !strings.Contains(body.Error.Message, "write budget (6 requests per 1m)") ||
			!strings.Contains(body.Error.Message, "after '10' seconds") {
			t.Errorf("429 body = %+v", body.Error)
		}
		// Reads have their own budget; another caller too.
		if rec := call(h, "GET", jc1+v, tokenA, addr); rec.Code != 200 {
			t.Errorf("read after the writes ran out: status %d, want 200", rec.Code)
		}
		if rec := call(h, "PUT", jc1+v, tokenB, addr); rec.Code != 200 {
			t.Errorf("write by another token: status %d, want 200", rec.Code)
		}

		time.Sleep(9 * time.Second)
		if rec := call(h, "PUT", jc1+v, tokenA, addr); rec.Code != 429 || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("write 9s later: status %d, Retry-After %q; want 429, 1", rec.Code, rec.Header().Get("Retry-After"))
		}
		time.Sleep(time.Second)
		if rec := call(h, "PUT", jc1+v, tokenA, addr); rec.Code != 200 {
			t.Errorf("write after Retry-After: status %d, want 200", rec.Code)
		}
		time.Sleep(time.Minute)
		rec = call(h, "PUT", jc1+v, tokenA, addr)
		if got := remaining(t, rec, httpapi.HeaderRemainingWrites); rec.Code != 200 || got != 5 {
			t.Errorf("write a window later: status %d, remaining %d; want 200, 5 (a full budget less this one)", rec.Code, got)
		}
	})
}

// TestThrottleByAddress: without authentication, each remote address has
// its own budget.
func TestThrottleByAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		h := httpapi.New(s, &httpapi.Options{Logger: log, Throttle: &httpapi.Throttle{ReadsPerWindow: 2}})
		for _, port := range []string{"1", "2"} { // same host, other ports: one caller
			call(h, "GET", jc1+v, "", "192.0.2.1:"+port)
		}
		if rec := call(h, "GET", jc1+v, "", "192.0.2.1:3"); rec.Code != 429 {
			t.Errorf("third read from 192.0.2.1: status %d, want 429", rec.Code)
		}
		if rec := call(h, "GET", jc1+v, "", "[2001:db8::1]:5"); rec.Code != 404 || remaining(t, rec, httpapi.HeaderRemainingReads) != 1 {
			t.Errorf("read from another address: status %d, %s %q; want 404 and 1 left", rec.Code,
				httpapi.HeaderRemainingReads, rec.Header().Get(httpapi.HeaderRemainingReads))
		}
	})
}

func TestThrottleDisabled(t *testing.T) {
	h := throttled(t, &httpapi.Throttle{Disabled: true, ReadsPerWindow: 1})
	for i := range 3 {
		rec := call(h, "GET", jc1+v, tokenA, "192.0.2.1:1")
		if rec.Code != 404 {
			t.Fatalf("read %d: status %d, want 404", i, rec.Code)
		}
		if v := rec.Header().Get(httpapi.HeaderRemainingReads); v != "" {
			t.Errorf("read %d: %s = %q with throttling off", i, httpapi.HeaderRemainingReads, v)
		}
	}
}

// TestThrottleDefaults: a nil Throttle means the documented budgets.
func TestThrottleDefaults(t *testing.T) {
	h := throttled(t, nil)
	if got := remaining(t, call(h, "GET", jc1+v, tokenA, "192.0.2.1:1"), httpapi.HeaderRemainingReads); got != httpapi.DefaultReadsPerWindow-1 {
		t.Errorf("remaining reads after one = %d, want %d", got, httpapi.DefaultReadsPerWindow-1)
	}
	if got := remaining(t, call(h, "PUT", jc1+v, tokenA, "192.0.2.1:1"), httpapi.HeaderRemainingWrites); got != httpapi.DefaultWritesPerWindow-1 {
		t.Errorf("remaining writes after one = %d, want %d", got, httpapi.DefaultWritesPerWindow-1)
	}
}

// TestClientRetryAfter: the Go client reports a 429's Retry-After.
func TestClientRetryAfter(t *testing.T) {
	srv := httptest.NewServer(throttled(t, &httpapi.Throttle{ReadsPerWindow: 1, Window: time.Hour}))
	defer srv.Close()
	c := httpapi.NewClient(srv.URL, &httpapi.ClientOptions{Token: tokenA})
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg1", Collection: "jc1"}
	c.GetCollection(context.Background(), ref)
	_, err := c.GetCollection(context.Background(), ref)
	var re *httpapi.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 429 || re.Detail.Code != httpapi.CodeTooManyRequests {
		t.Fatalf("second GetCollection = %v, want a 429 ResponseError", err)
	}
	if re.RetryAfter != time.Hour {
		t.Errorf("RetryAfter = %v, want 1h (one read per hour)", re.RetryAfter)
	}
}
