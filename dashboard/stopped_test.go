package dashboard_test

import (
	"context"
	"net/http"
	"testing"
)

// TestStoppedSchedulerIs503 asks for pages once the Scheduler has stopped:
// each is answered 503 with Retry-After, saying the scheduler is shutting
// down.
func TestStoppedSchedulerIs503(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("c", nil)
	if err := e.s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", collPath("c")} {
		p := e.get(path)
		wantStatus(t, "GET "+path+" after Stop", p, http.StatusServiceUnavailable)
		wantIn(t, "GET "+path+" after Stop", p, "shutting down")
		if got := p.header.Get("Retry-After"); got != "5" {
			t.Errorf("GET %s after Stop: Retry-After %q, want 5", path, got)
		}
	}
}
