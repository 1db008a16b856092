package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	scheduler "github.com/jobclock/scheduler"
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
