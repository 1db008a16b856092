package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// Mount the API in a host's mux and drive it with the Client.
func Example() {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		panic(err)
	}
	auth, err := httpapi.NewTokenAuth("example-token-0123456789 sub1")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/subscriptions/", httpapi.New(s, &httpapi.Options{Authenticator: auth, Logger: log}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := context.Background()
	c := httpapi.NewClient(srv.URL, &httpapi.ClientOptions{Token: "example-token-0123456789"})
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "reports", Collection: "nightly"}
	col, created, err := c.PutCollection(ctx, ref, nil, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(col.ID, created)

	// Errors are *httpapi.ResponseError values naming the field at fault.
	_, _, err = c.PutJobJSON(ctx, ref, "cleanup", json.RawMessage(`{"properties": {
		"startTime": "2099-01-01T00:00:00Z",
		"action": {"type": "Http", "request": {"uri": "https://example.com/cleanup", "method": "POST"}},
		"recurrence": {"frequency": "Day", "schedule": {"hours": [3], "minutes": [0]}},
		"state": "Disabled"}}`), nil)
	fmt.Println(err)

	job, _, err := c.PutJobJSON(ctx, ref, "cleanup", json.RawMessage(`{"properties": {
		"action": {"type": "Http", "request": {"uri": "https://example.com/cleanup", "method": "POST"}},
		"recurrence": {"frequency": "Day", "schedule": {"hours": [3], "minutes": [0]}},
		"state": "Disabled"}}`), nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(job.Name, job.Properties.State, job.Properties.Recurrence.Frequency)
	// Output:
	// /subscriptions/sub1/resourceGroups/reports/providers/Microsoft.Scheduler/jobCollections/nightly true
	// httpapi: 400 BadRequest: properties.startTime: "2099-01-01T00:00:00Z" is more than 18 months (548 days) from now
	// nightly/cleanup Disabled Day
}

// Surfaces that check the same tokens share one budget of failed
// authentications, so that a guess at one counts at the others: here a
// sign-in form (which calls AuthFailures.Authenticate, as the dashboard
// does with dashboard.Options.AuthFailures) and the API.
func ExampleNewAuthFailures() {
	log := slog.New(slog.DiscardHandler)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		panic(err)
	}
	auth, err := httpapi.NewTokenAuth("example-token-0123456789 sub1")
	if err != nil {
		panic(err)
	}
	failures := httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 1})
	api := httpapi.New(s, &httpapi.Options{Authenticator: auth, Logger: log, AuthFailures: failures})

	// A wrong token at the sign-in form, from 192.0.2.1, ...
	signIn := httptest.NewRequest(http.MethodPost, "/login", nil)
	signIn.RemoteAddr = "192.0.2.1:50000"
	signIn.Header.Set("Authorization", "Bearer wrong-token-0123456789")
	_, err = failures.Authenticate(signIn, auth)
	fmt.Println(err)

	// ... spends that address's budget at the API too: the right token
	// is not checked until the budget refills (15 minutes for one).
	req := httptest.NewRequest(http.MethodGet, "/subscriptions/sub1/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01", nil)
	req.RemoteAddr = "192.0.2.1:50001"
	req.Header.Set("Authorization", "Bearer example-token-0123456789")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"))
	// Output:
	// unknown bearer token: httpapi: unauthenticated
	// 429 900
}

// Backfill a job's missed occurrences over the API: a dry run says which
// would run, and nothing runs.
func ExampleClient_BackfillJob() {
	log := slog.New(slog.DiscardHandler)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(httpapi.New(s, &httpapi.Options{Logger: log}))
	defer srv.Close()

	ctx := context.Background()
	c := httpapi.NewClient(srv.URL, nil)
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "reports", Collection: "nightly"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		panic(err)
	}
	if _, _, err := c.PutJobJSON(ctx, ref, "cleanup", json.RawMessage(`{"properties": {
		"startTime": "2026-01-01T00:00:00Z",
		"action": {"type": "Http", "request": {"uri": "https://example.com/cleanup", "method": "POST"}},
		"recurrence": {"frequency": "Day", "schedule": {"hours": [3], "minutes": [0]}},
		"state": "Enabled"}}`), nil); err != nil {
		panic(err)
	}
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	res, err := c.BackfillJob(ctx, ref, "cleanup", from, from.AddDate(0, 0, 2), &scheduler.BackfillOptions{DryRun: true})
	if err != nil {
		panic(err)
	}
	for _, t := range res.ExpectedTimes {
		fmt.Println(t.Format(time.RFC3339))
	}
	// Output:
	// 2026-03-01T03:00:00Z
	// 2026-03-02T03:00:00Z
}

// List the attempts that faulted their occurrence, with the HTTP status
// they got: the members of the Go API's history entries are in the REST
// entries too.
func ExampleClient_ListHistory() {
	log := slog.New(slog.DiscardHandler)
	reg := new(action.Registry)
	reg.Register(action.HTTPS, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		return &action.Result{Message: "Http Action - Response from host 'example.com': 'ServiceUnavailable'"},
			&httpaction.StatusError{Host: "example.com", StatusCode: 503, Status: "Service Unavailable"}
	}))
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: log})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	defer s.Stop(ctx)
	srv := httptest.NewServer(httpapi.New(s, &httpapi.Options{Logger: log}))
	defer srv.Close()

	c := httpapi.NewClient(srv.URL, nil)
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "reports", Collection: "nightly"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		panic(err)
	}
	if _, _, err := c.PutJobJSON(ctx, ref, "export", json.RawMessage(`{"properties": {
		"action": {"type": "Https", "request": {"uri": "https://example.com/export", "method": "POST"},
			"retryPolicy": {"retryType": "None"}},
		"recurrence": {"frequency": "Day", "schedule": {"hours": [3], "minutes": [0]}}}}`), nil); err != nil {
		panic(err)
	}
	if _, err := c.RunJob(ctx, ref, "export"); err != nil {
		panic(err)
	}
	for i := 0; ; i++ {
		page, err := c.ListHistory(ctx, ref, "export", &httpapi.ListOptions{Filter: "faulted eq true"})
		if err != nil {
			panic(err)
		}
		if len(page.Value) == 0 { // the run has not ended yet
			if i == 1000 {
				panic("no faulted attempt after 10s")
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for _, e := range page.Value {
			p := e.Properties
			fmt.Println(p.ActionName, p.Status, p.HTTPStatus, p.Faulted, p.Manual, p.ExecutionTag != "")
		}
		break
	}
	// Output:
	// MainAction Failed 503 true true true
}

// List the jobs that run soonest first: $orderby on a member of the
// job's status, with a $filter whose conditions are joined by "and".
func ExampleClient_ListJobs() {
	log := slog.New(slog.DiscardHandler)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		panic(err)
	}
	auth, err := httpapi.NewTokenAuth("example-token-0123456789 sub1")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(httpapi.New(s, &httpapi.Options{Authenticator: auth, Logger: log}))
	defer srv.Close()

	ctx := context.Background()
	c := httpapi.NewClient(srv.URL, &httpapi.ClientOptions{Token: "example-token-0123456789"})
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "reports", Collection: "nightly"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		panic(err)
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for name, days := range map[string]int{"weekly": 7, "tomorrow": 1, "monthly": 30} {
		_, _, err := c.PutJobJSON(ctx, ref, name, json.RawMessage(`{"tags": {"team": "ops"}, "properties": {
			"startTime": "`+today.AddDate(0, 0, days).Format(time.RFC3339)+`",
			"action": {"type": "Http", "request": {"uri": "https://example.com/`+name+`", "method": "POST"}},
			"recurrence": {"frequency": "Day", "interval": 30}}}`), nil)
		if err != nil {
			panic(err)
		}
	}
	list, err := c.ListJobs(ctx, ref, &httpapi.ListOptions{
		Filter:  "state eq Enabled and tagName eq 'team'",
		OrderBy: "properties/status/nextExecutionTime",
	})
	if err != nil {
		panic(err)
	}
	for _, j := range list.Value {
		fmt.Println(j.Name)
	}
	// Output:
	// nightly/tomorrow
	// nightly/weekly
	// nightly/monthly
}
