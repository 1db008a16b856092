package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobclock/scheduler/httpapi"
)

// gatedAuth accepts every request with the right token, each once all of
// a round's requests are being checked at once (or the gate's time is
// up), and refuses the others.
type gatedAuth struct {
	round   int // requests checked at once before any is answered
	mu      sync.Mutex
	entered int
	open    chan struct{}
}

func (a *gatedAuth) Authenticate(r *http.Request) (*httpapi.Principal, error) {
	if r.Header.Get("Authorization") != "Bearer right" {
		return nil, errors.New("wrong token")
	}
	a.mu.Lock()
	a.entered++
	if a.entered == a.round {
		close(a.open)
	}
	a.mu.Unlock()
	select {
	case <-a.open:
	case <-time.After(5 * time.Second):
	}
	return &httpapi.Principal{Name: "client", AllSubscriptions: true}, nil
}

// TestAuthFailuresConcurrentKnown checks that a known address's valid
// requests at once, more of them than its budget of failed
// authentications, are all served: none is refused for the failures that
// the others' checks in flight might have been. And that its wrong
// tokens are still charged: once they use its budget up, it is refused.
func TestAuthFailuresConcurrentKnown(t *testing.T) {
	const perAddress, round = 10, 30
	f := httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: perAddress, Overall: 100, Window: time.Hour, Wait: time.Millisecond})
	auth := &gatedAuth{round: 1, open: make(chan struct{})}
	req := func(token string) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.7:4000"
		r.Header.Set("Authorization", "Bearer "+token)
		return r
	}
	if _, err := f.Authenticate(req("right"), auth); err != nil { // the address becomes known
		t.Fatal(err)
	}
	auth.mu.Lock()
	auth.round, auth.entered, auth.open = round, 0, make(chan struct{})
	auth.mu.Unlock()
	var refused atomic.Int32
	var wg sync.WaitGroup
	for range round {
		wg.Go(func() {
			if _, err := f.Authenticate(req("right"), auth); err != nil {
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if n := refused.Load(); n != 0 {
		t.Errorf("%d of %d valid requests at once from a known address refused, want none", n, round)
	}
	for i := range perAddress {
		if _, err := f.Authenticate(req("wrong"), auth); err == nil || errors.As(err, new(*httpapi.TooManyFailuresError)) {
			t.Fatalf("wrong token %d = %v, want it checked and refused", i+1, err)
		}
	}
	if _, err := f.Authenticate(req("right"), auth); !errors.As(err, new(*httpapi.TooManyFailuresError)) {
		t.Errorf("right token once the known address's failures used its budget up = %v, want TooManyFailuresError", err)
	}
}
