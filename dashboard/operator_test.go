package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestManualRunMarked: the history row of a run asked for with Run now
// is marked "run now"; the row of the scheduled occurrence is not.
func TestManualRunMarked(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.collection("sub/rg/c", nil)
	e.job("sub/rg/c", "j", "/ok", `"recurrence": {"frequency": "Hour"}`) // its first occurrence is now
	e.waitHistory("sub/rg/c", "j", 1)
	path := jobPath("sub/rg/c", "j")
	wantStatus(t, "run now", e.post(path+"/run", url.Values{"csrf": {e.token(path)}}), http.StatusSeeOther)
	h := e.waitHistory("sub/rg/c", "j", 2)
	if !h[0].Manual || h[1].Manual {
		t.Errorf("Manual of the entries, newest first: %v, %v; want true, false", h[0].Manual, h[1].Manual)
	}
	if n := strings.Count(e.get(path).body, `<span class="badge manual"`); n != 1 {
		t.Errorf("the job page marks %d history rows as run now, want 1", n)
	}
}
