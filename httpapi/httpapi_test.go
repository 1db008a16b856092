package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

func TestNewTokenAuth(t *testing.T) {
	tests := []struct {
		name    string
		list    string
		wantErr string
	}{
		{"one line", "abcdefghijklmnop sub1", ""},
		{"several with comments", "# ops\nabcdefghijklmnop sub1,sub2\n\n0123456789abcdef *\n", ""},
		{"semicolons", "abcdefghijklmnop sub1; 0123456789abcdef *", ""},
		{"empty", "\n# nothing\n", "no tokens"},
		{"one field", "abcdefghijklmnop", "entry 1: want"},
		{"read-only", "abcdefghijklmnop sub1 read-only; 0123456789abcdef * READ-ONLY", ""},
		{"three fields", "abcdefghijklmnop sub1 sub2", `entry 1: the third field is "sub2"`},
		{"four fields", "abcdefghijklmnop sub1 read-only x", "entry 1: want"},
		{"short token", "short sub1", "entry 1: the token must be"},
		{"bad subscription", "abcdefghijklmnop sub1,,sub2", `entry 1: subscription ""`},
		{"star among others", "abcdefghijklmnop sub1,*", `entry 1: subscription "*"`},
		{"duplicate", "abcdefghijklmnop sub1\nabcdefghijklmnop sub2", "entry 2: the token is listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := httpapi.NewTokenAuth(tt.list)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("NewTokenAuth(%q) = %v, want no error", tt.list, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("NewTokenAuth(%q) = %v, want an error containing %q", tt.list, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "abcdefghijklmnop") {
				t.Errorf("error %q reveals the token", err)
			}
		})
	}
}

func TestTokenAuthenticate(t *testing.T) {
	a, err := httpapi.NewTokenAuth("token-for-one-sub sub1,SUB2\ntoken-for-all-subs *")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		header  string
		wantErr bool
		allowed []string
		denied  []string
	}{
		{header: "", wantErr: true},
		{header: "Basic dXNlcjpwYXNz", wantErr: true},
		{header: "Bearer ", wantErr: true},
		{header: "Bearer unknown-token-xyz", wantErr: true},
		{header: "Bearer token-for-one-sub", allowed: []string{"sub1", "SUB1", "sub2"}, denied: []string{"sub3", ""}},
		{header: "bearer token-for-all-subs", allowed: []string{"sub1", "anything"}},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		if tt.header != "" {
			r.Header.Set("Authorization", tt.header)
		}
		p, err := a.Authenticate(r)
		if tt.wantErr {
			if !errors.Is(err, httpapi.ErrUnauthenticated) {
				t.Errorf("Authenticate(%q) = %v, %v; want ErrUnauthenticated", tt.header, p, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Authenticate(%q) = %v", tt.header, err)
		}
		for _, s := range tt.allowed {
			if !p.Allows(s) {
				t.Errorf("Authenticate(%q).Allows(%q) = false, want true", tt.header, s)
			}
		}
		for _, s := range tt.denied {
			if p.Allows(s) {
				t.Errorf("Authenticate(%q).Allows(%q) = true, want false", tt.header, s)
			}
		}
	}
	var none *httpapi.Principal
	if none.Allows("sub1") {
		t.Error("nil Principal allows sub1")
	}
}

func TestLoadTokenAuth(t *testing.T) {
	t.Setenv(httpapi.TokensEnv, "")
	if a, err := httpapi.LoadTokenAuth(""); a != nil || err != nil {
		t.Errorf("LoadTokenAuth(\"\") without the variable = %v, %v; want nil, nil", a, err)
	}
	t.Setenv(httpapi.TokensEnv, "from-the-environment sub1")
	a, err := httpapi.LoadTokenAuth("")
	if err != nil || a == nil {
		t.Fatalf("LoadTokenAuth(\"\") = %v, %v", a, err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer from-the-environment")
	if p, err := a.Authenticate(r); err != nil || !p.Allows("sub1") {
		t.Errorf("token from %s: %v, %v", httpapi.TokensEnv, p, err)
	}
	t.Setenv(httpapi.TokensEnv, "bad")
	if _, err := httpapi.LoadTokenAuth(""); err == nil || !strings.Contains(err.Error(), httpapi.TokensEnv) {
		t.Errorf("LoadTokenAuth with a bad variable = %v, want an error naming %s", err, httpapi.TokensEnv)
	}
	file := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(file, []byte("from-the-file-123 sub9\n"), 0o600)
	a, err = httpapi.LoadTokenAuth(file)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer from-the-file-123")
	if p, err := a.Authenticate(r); err != nil || !p.Allows("sub9") {
		t.Errorf("token from file: %v, %v", p, err)
	}
}

// quiet is a scheduler Config that logs nothing.
var quiet = &scheduler.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

// decodeError reads an ARM error body.
func decodeError(t *testing.T, rec *httptest.ResponseRecorder) httpapi.ErrorDetail {
	t.Helper()
	var er httpapi.ErrorResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &er); err != nil {
		t.Fatalf("body %q is not an ARM error: %v", rec.Body, err)
	}
	return er.Error
}

func TestPanicIsRecovered(t *testing.T) {
	var logs bytes.Buffer
	s, err := scheduler.New(memory.New(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(s, &httpapi.Options{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Authenticator: httpapi.AuthenticatorFunc(func(r *http.Request) (*httpapi.Principal, error) {
			panic("authenticator bug")
		}),
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/subscriptions/s/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	if d := decodeError(t, rec); d.Code != httpapi.CodeInternalServerError {
		t.Errorf("code %q, want %q", d.Code, httpapi.CodeInternalServerError)
	}
	if rec.Header().Get("x-ms-request-id") == "" {
		t.Error("no x-ms-request-id")
	}
	if !strings.Contains(logs.String(), "authenticator bug") {
		t.Errorf("the panic is not logged: %q", logs.String())
	}
}

// brokenStore fails every read of collection "sub1/rg1/broken".
type brokenStore struct{ scheduler.Store }

var errDisk = errors.New("disk on fire")

func (b brokenStore) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	if strings.HasSuffix(name, "/broken") {
		return nil, errDisk
	}
	return b.Store.GetCollection(ctx, name)
}

func TestStoreFailureIs500(t *testing.T) {
	var logs bytes.Buffer
	s, err := scheduler.New(brokenStore{memory.New()}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(s, &httpapi.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/broken?api-version=2016-03-01", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	d := decodeError(t, rec)
	if d.Code != httpapi.CodeInternalServerError || strings.Contains(d.Message, "fire") {
		t.Errorf("error = %+v, want InternalServerError without the store's message", d)
	}
	if !strings.Contains(logs.String(), "disk on fire") {
		t.Errorf("the store error is not logged: %q", logs.String())
	}
}

func TestStoppedSchedulerIs503(t *testing.T) {
	s, err := scheduler.New(memory.New(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	s.Stop(context.Background())
	h := httpapi.New(s, &httpapi.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	const coll = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc"
	for _, req := range []struct{ method, path, body string }{
		{"GET", coll, ""},
		{"GET", coll + "/jobs/j/history", ""},
		{"PUT", coll, `{"location": "West Europe"}`},
		{"DELETE", coll + "/jobs/j", ""},
	} {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(req.method, req.path+"?api-version=2016-03-01", strings.NewReader(req.body))
		if req.body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s %s: status %d, want 503", req.method, req.path, rec.Code)
			continue
		}
		// A process shutting down: the client retries, at another
		// process behind the same address.
		if got := rec.Header().Get("Retry-After"); got != "5" {
			t.Errorf("%s %s: Retry-After %q, want 5", req.method, req.path, got)
		}
		if d := decodeError(t, rec); d.Code != httpapi.CodeServiceUnavailable || !strings.Contains(d.Message, "shutting down") {
			t.Errorf("%s %s: error %+v, want ServiceUnavailable saying the scheduler is shutting down", req.method, req.path, d)
		}
	}
}

func TestBaseURLInNextLink(t *testing.T) {
	s, err := scheduler.New(memory.New(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "sub1/rg1/jc", nil, nil); err != nil {
		t.Fatal(err)
	}
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}, "state": "Disabled"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := s.PutJob(ctx, "sub1/rg1/jc", name, def, nil); err != nil {
			t.Fatal(err)
		}
	}
	h := httpapi.New(s, &httpapi.Options{BaseURL: "https://scheduler.example.com/"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc/jobs?api-version=2016-03-01&$top=1&$skip=0", nil))
	var out httpapi.JobListResult
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	want := "https://scheduler.example.com/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc/jobs?api-version=2016-03-01&$top=1&$skip=1"
	if out.NextLink == nil || *out.NextLink != want {
		t.Errorf("nextLink = %v, want %s", out.NextLink, want)
	}
	if len(out.Value) != 1 || out.Value[0].Name != "jc/a" {
		t.Errorf("page = %+v, want job jc/a", out.Value)
	}
}

// TestClient drives every Client method against the handler.
func TestClient(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.authd)
	defer srv.Close()
	ctx := context.Background()
	c := httpapi.NewClient(srv.URL, &httpapi.ClientOptions{Token: token})
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg-c", Collection: "jc"}

	col, created, err := c.PutCollection(ctx, ref, &scheduler.JobCollection{Location: "here", Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUFree}}}, nil)
	if err != nil || !created || col.Properties.SKU.Name != scheduler.SKUFree || col.ETag == "" {
		t.Fatalf("PutCollection = %+v, %v, %v", col, created, err)
	}
	if _, created, err := c.PutCollection(ctx, ref, &scheduler.JobCollection{Location: "here"}, &httpapi.WriteOptions{IfMatch: col.ETag}); err != nil || created {
		t.Fatalf("PutCollection with If-Match = created %v, %v; want replaced", created, err)
	}
	var re *httpapi.ResponseError
	_, _, err = c.PutCollection(ctx, ref, nil, &httpapi.WriteOptions{IfMatch: col.ETag})
	if !errors.As(err, &re) || re.StatusCode != http.StatusPreconditionFailed || re.Detail.Code != httpapi.CodePreconditionFailed || re.RequestID == "" {
		t.Fatalf("PutCollection with a stale If-Match = %v, want a 412 ResponseError with a request ID", err)
	}
	pc, err := c.PatchCollection(ctx, ref, json.RawMessage(`{"properties": {"state": "Suspended"}}`), nil)
	if err != nil || pc.Properties.State != scheduler.CollectionSuspended || pc.Location != "here" {
		t.Fatalf("PatchCollection = %+v, %v", pc, err)
	}
	if err := c.DisableCollection(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if g, err := c.GetCollection(ctx, ref); err != nil || g.Properties.State != scheduler.CollectionDisabled {
		t.Fatalf("GetCollection after disable = %+v, %v", g, err)
	}
	if err := c.EnableCollection(ctx, ref); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListCollections(ctx, "sub1", "rg-c")
	if err != nil || len(list) != 1 || list[0].Properties.State != scheduler.CollectionEnabled {
		t.Fatalf("ListCollections(rg-c) = %+v, %v", list, err)
	}
	if list, err := c.ListCollections(ctx, "sub1", ""); err != nil || len(list) != 1 {
		t.Fatalf("ListCollections(sub1) = %+v, %v", list, err)
	}

	start := time.Now().UTC().AddDate(0, 0, 30).Format("2006-01-02")
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/ok", "method": "GET"}},
		"recurrence": {"frequency": "Day"}, "startTime": "`+start+`", "state": "Disabled"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	j, created, err := c.PutJob(ctx, ref, "j", def, nil)
	if err != nil || !created || j.Name != "jc/j" || j.Type != httpapi.TypeJob {
		t.Fatalf("PutJob = %+v, %v, %v", j, created, err)
	}
	if _, err := c.PatchJob(ctx, ref, "j", json.RawMessage(`{"properties": {"state": "Enabled"}}`), &httpapi.WriteOptions{IfMatch: j.ETag}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GetJob(ctx, ref, "j")
	if err != nil || g.Properties.State != scheduler.JobEnabled {
		t.Fatalf("GetJob = %+v, %v", g, err)
	}
	if _, err := c.RunJob(ctx, ref, "j"); err != nil {
		t.Fatal(err)
	}
	waitHistory("sub1/rg-c/jc", "j", 1)(t, e)
	h, err := c.ListHistory(ctx, ref, "j", &httpapi.ListOptions{Filter: "status eq Completed", Top: 10})
	if err != nil || len(h.Value) != 1 || h.Value[0].Properties.RepeatCount != 1 {
		t.Fatalf("ListHistory = %+v, %v", h, err)
	}
	jobs, err := c.ListJobs(ctx, ref, &httpapi.ListOptions{Filter: "state eq Enabled", Top: 1})
	if err != nil || len(jobs.Value) != 1 || jobs.NextLink != nil {
		t.Fatalf("ListJobs = %+v, %v", jobs, err)
	}
	if diff := cmp.Diff(g.Properties.Action, jobs.Value[0].Properties.Action); diff != "" {
		t.Errorf("listed job differs from GetJob (-get +list):\n%s", diff)
	}
	if err := c.DeleteJob(ctx, ref, "j", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJob(ctx, ref, "j"); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Fatalf("GetJob after DeleteJob = %v, want 404", err)
	}
	if err := c.DeleteCollection(ctx, ref, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetCollection(ctx, ref); !errors.As(err, &re) || re.Detail.Code != httpapi.CodeResourceNotFound {
		t.Fatalf("GetCollection after delete = %v, want ResourceNotFound", err)
	}
	// Another subscription: 403.
	other := httpapi.CollectionRef{Subscription: "sub2", ResourceGroup: "rg", Collection: "jc"}
	if _, err := c.GetCollection(ctx, other); !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || re.Detail.Code != httpapi.CodeAuthorizationFailed {
		t.Fatalf("GetCollection in sub2 = %v, want 403 AuthorizationFailed", err)
	}
}

// TestRunAnswers checks the body of a run: when the run was requested, the
// same time again while that run has not started.
func TestRunAnswers(t *testing.T) {
	s, err := scheduler.New(memory.New(), quiet) // not started: the run stays requested
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "sub1/rg/jc", nil, nil); err != nil {
		t.Fatal(err)
	}
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}, "state": "Enabled"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "sub1/rg/jc", "j", def, nil); err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(s, nil)
	run := func() httpapi.RunResult {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/subscriptions/sub1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/j/run?api-version=2016-03-01", nil))
		var res httpapi.RunResult
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &res) != nil {
			t.Fatalf("POST run = %d %s", rec.Code, rec.Body)
		}
		return res
	}
	before := time.Now()
	first := run()
	if d := first.RequestedTime.Sub(before); d < -time.Second || d > time.Minute || !strings.Contains(first.Message, "/jobs/j/history") {
		t.Errorf("POST run = %+v, want the time of the request (%v) and where to see the outcome", first, before)
	}
	if again := run(); !again.RequestedTime.Equal(first.RequestedTime) {
		t.Errorf("POST run again = %v, want the pending request's %v", again.RequestedTime, first.RequestedTime)
	}
}
