package http_test

import (
	"errors"
	"fmt"
	nethttp "net/http"
	"net/url"
	"testing"
	"time"

	httpaction "github.com/jobclock/scheduler/action/http"
)

// TestRetryAfter: a 429 or 503 answer's Retry-After, in seconds or as an
// HTTP date, is on the StatusError as the instant it names; other
// statuses and unreadable values leave it zero.
func TestRetryAfter(t *testing.T) {
	date := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	srv := newServer(t, nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		var code int
		var after string
		fmt.Sscanf(r.URL.Query().Get("s"), "%d", &code)
		after = r.URL.Query().Get("after")
		if after != "" {
			w.Header().Set("Retry-After", after)
		}
		w.WriteHeader(code)
	}))
	ex := newExecutor(t, nil)
	tests := []struct {
		status int
		after  string
		want   time.Duration // from now; 0: none; -1: the date
	}{
		{429, "120", 120 * time.Second},
		{503, date.Format(nethttp.TimeFormat), -1},
		{503, "", 0},
		{500, "120", 0},
		{429, "soon", 0},
		{429, "-5", 0},
	}
	for _, tt := range tests {
		before := time.Now()
		_, err := execute(t, ex, newRequest("GET", fmt.Sprintf("%s/?s=%d&after=%s", srv.URL, tt.status, url.QueryEscape(tt.after))))
		var se *httpaction.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("%d %q: %v, want a StatusError", tt.status, tt.after, err)
		}
		switch {
		case tt.want == 0 && !se.RetryAfter.IsZero():
			t.Errorf("%d %q: RetryAfter %v, want none", tt.status, tt.after, se.RetryAfter)
		case tt.want == -1 && !se.RetryAfter.Equal(date):
			t.Errorf("%d %q: RetryAfter %v, want %v", tt.status, tt.after, se.RetryAfter, date)
		case tt.want > 0 && (se.RetryAfter.Before(before.Add(tt.want)) || se.RetryAfter.After(time.Now().Add(tt.want))):
			t.Errorf("%d %q: RetryAfter %v, want %v after the answer", tt.status, tt.after, se.RetryAfter, tt.want)
		}
	}
}
