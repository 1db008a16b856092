package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
)

// TestFinalStateSaysWhich: the 409 of a request to run a job in a final
// state says which state it is in.
func TestFinalStateSaysWhich(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.open)
	defer srv.Close()
	ctx := context.Background()
	if _, err := e.s.PutCollection(ctx, "sub1/rg1/jc1", nil, nil); err != nil {
		t.Fatal(err)
	}
	def := `{"action": {"type": "Http", "request": {"uri": "http://example.com/fail", "method": "GET"}, "retryPolicy": {"retryType": "None"}}}`
	if _, err := e.s.PutJobJSON(ctx, "sub1/rg1/jc1", "once", []byte(def), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := e.s.GetJob(ctx, "sub1/rg1/jc1", "once")
		if err != nil {
			t.Fatal(err)
		}
		if r.State == scheduler.JobFaulted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s after 10s, want Faulted", r.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := http.Post(srv.URL+"/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1/jobs/once/run"+v, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var er httpapi.ErrorResponse
	if err := json.NewDecoder(res.Body).Decode(&er); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusConflict || !strings.HasPrefix(er.Error.Message, "The job 'once' is Faulted, a final state") {
		t.Errorf("run of a Faulted job: %d %q, want 409 saying it is Faulted", res.StatusCode, er.Error.Message)
	}
}
