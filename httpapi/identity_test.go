package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/httpapi"
)

// TestBodyNamesAnotherResource: a PUT or PATCH body whose id or name
// names another job, collection or calendar is refused with 400 at that
// member, and nothing is written; one that names the resource of the path,
// in any case, or gives null, is accepted.
func TestBodyNamesAnotherResource(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.open)
	defer srv.Close()
	const (
		rg   = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections"
		jc   = rg + "/jc1"
		job  = jc + "/jobs/j1"
		cal  = jc + "/calendars/holidays"
		act  = `"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}`
		calP = `"properties": {"dates": ["2030-12-25"]}`
	)
	// A job that does not run during the test: a run would change it.
	jobP := `"properties": {"startTime": "` + time.Now().UTC().AddDate(1, 0, 0).Format(time.RFC3339) + `", ` + act + `}`
	send := func(method, path, body string) (int, httpapi.ErrorResponse) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path+v, strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var er httpapi.ErrorResponse
		if res.StatusCode >= 400 {
			if err := json.Unmarshal(b, &er); err != nil {
				t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
			}
		}
		return res.StatusCode, er
	}
	if code, er := send("PUT", jc, `{"location": "West Europe", "properties": {}}`); code != http.StatusCreated {
		t.Fatalf("PUT collection: %d %+v", code, er)
	}
	if code, er := send("PUT", job, `{`+jobP+`}`); code != http.StatusCreated {
		t.Fatalf("PUT job: %d %+v", code, er)
	}
	if code, er := send("PUT", cal, `{`+calP+`}`); code != http.StatusCreated {
		t.Fatalf("PUT calendar: %d %+v", code, er)
	}

	ctx := context.Background()
	jobBefore, err := e.s.GetJob(ctx, "sub1/rg1/jc1", "j1")
	if err != nil {
		t.Fatal(err)
	}
	collBefore, err := e.s.GetCollection(ctx, "sub1/rg1/jc1")
	if err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		name, method, path, body string
		targets                  []string
	}{
		{"job name of another job", "PUT", job, `{"name": "jc1/j2", ` + jobP + `}`, []string{"name"}},
		{"job name of another collection", "PUT", job, `{"name": "jc2/j1", ` + jobP + `}`, []string{"name"}},
		{"job id of another collection", "PUT", job, `{"id": "` + rg + `/jc2/jobs/j1", ` + jobP + `}`, []string{"id"}},
		{"job id and name", "PATCH", job, `{"id": "` + jc + `/jobs/j2", "name": "j2", ` + jobP + `}`, []string{"id", "name"}},
		{"job id not a string", "PATCH", job, `{"id": 7, ` + jobP + `}`, []string{"id"}},
		{"job id in another case of member", "PUT", job, `{"ID": "` + jc + `/jobs/j2", ` + jobP + `}`, []string{"id"}},
		{"collection name", "PUT", jc, `{"name": "jc2", "location": "West Europe", "properties": {}}`, []string{"name"}},
		{"collection id", "PATCH", jc, `{"id": "` + rg + `/jc2", "properties": {"state": "Disabled"}}`, []string{"id"}},
		{"collection id of another resource group", "PUT", jc, `{"id": "/subscriptions/sub1/resourceGroups/rg2/providers/Microsoft.Scheduler/jobCollections/jc1", "location": "West Europe", "properties": {}}`, []string{"id"}},
		{"calendar name", "PUT", cal, `{"name": "other", ` + calP + `}`, []string{"name"}},
	}
	for _, tt := range refused {
		code, er := send(tt.method, tt.path, tt.body)
		if code != http.StatusBadRequest {
			t.Errorf("%s: %s = %d, want 400", tt.name, tt.method, code)
			continue
		}
		var got []string
		if len(er.Error.Details) == 0 {
			got = []string{er.Error.Target}
		}
		for _, d := range er.Error.Details {
			got = append(got, d.Target)
		}
		if diff := cmp.Diff(tt.targets, got); diff != "" {
			t.Errorf("%s: targets (-want +got):\n%s\n%s", tt.name, diff, er.Error.Message)
		}
	}
	// Nothing of the refused bodies was written.
	if j, err := e.s.GetJob(ctx, "sub1/rg1/jc1", "j1"); err != nil || j.ETag != jobBefore.ETag {
		t.Errorf("job after refused writes: ETag %v, %v; want %v, unchanged", j.ETag, err, jobBefore.ETag)
	}
	if c, err := e.s.GetCollection(ctx, "sub1/rg1/jc1"); err != nil || c.ETag != collBefore.ETag {
		t.Errorf("collection after refused writes: ETag %v, %v; want %v, unchanged", c.ETag, err, collBefore.ETag)
	}

	accepted := []struct {
		name, method, path, body string
	}{
		{"job as GET returns it", "PUT", job, `{"id": "` + job + `", "type": "Microsoft.Scheduler/jobCollections/jobs", "name": "jc1/j1", ` + jobP + `}`},
		{"job in another case", "PUT", job, `{"id": "` + strings.ToUpper(job) + `", "name": "JC1/J1", ` + jobP + `}`},
		{"job by its own name", "PATCH", job, `{"name": "j1", ` + jobP + `}`},
		{"job with null", "PATCH", job, `{"id": null, "name": null, ` + jobP + `}`},
		{"collection", "PUT", jc, `{"id": "` + jc + `", "name": "JC1", "location": "West Europe", "properties": {}}`},
		{"collection patch", "PATCH", jc, `{"id": "` + strings.ToLower(jc) + `", "properties": {"state": "Enabled"}}`},
		{"calendar", "PUT", cal, `{"id": "` + cal + `", "name": "Holidays", ` + calP + `}`},
	}
	for _, tt := range accepted {
		if code, er := send(tt.method, tt.path, tt.body); code != http.StatusOK {
			t.Errorf("%s: %s = %d %+v, want 200", tt.name, tt.method, code, er)
		}
	}
}
