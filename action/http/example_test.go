package http_test

import (
	"context"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
)

func Example() {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		fmt.Fprintf(w, "job %s ran", r.Header.Get("x-ms-scheduler-jobid"))
	}))
	defer srv.Close()

	ex := httpaction.New(&httpaction.Options{Timeout: 10 * time.Second})
	defer ex.Close()
	res, err := ex.Execute(context.Background(), &action.Request{
		Action: &action.Action{
			Type:    action.HTTP,
			Request: &action.HTTPRequest{URI: srv.URL + "/hook", Method: "POST", Body: "{}"},
		},
		IDs:          action.StaticIDs{Job: "nightly", Tag: "occurrence-1", ClientRequest: "attempt-1"},
		CollectionID: "reports",
		ExpectedTime: time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC),
	})
	fmt.Println("error:", err)
	first, rest, _ := strings.Cut(res.Message, "\n")
	fmt.Println(strings.Replace(first, srv.Listener.Addr().String(), "HOST", 1))
	body, _, _ := strings.Cut(rest, "\nHeaders:")
	fmt.Println(body)
	// Output:
	// error: <nil>
	// Completed: 200 OK from host 'HOST'
	// Body: job nightly ran
}
