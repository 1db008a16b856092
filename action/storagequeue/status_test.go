package storagequeue_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jobclock/scheduler/action/storagequeue"
)

// TestAnswerWithoutErrorCode: an answer of the queue service without an
// error code (x-ms-error-code) is described by its status.
func TestAnswerWithoutErrorCode(t *testing.T) {
	for _, tt := range []struct {
		status int
		want   string
	}{
		{400, "StorageQueue Action - queue service HOST answered 400 Bad Request for 'acct1/orders'"},
		{403, "StorageQueue Action - SAS token refused by HOST for 'acct1/orders': 403 Forbidden"},
		{409, "StorageQueue Action - queue service HOST answered 409 Conflict for 'acct1/orders'"},
	} {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
			}))
			defer srv.Close()
			e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(srv.URL)})
			defer e.Close()
			res, err := e.Execute(t.Context(), request("acct1", "orders", "?sv=2020-01-01&sp=a&sig=abc", "hi"))
			want := strings.Replace(tt.want, "HOST", strings.TrimPrefix(srv.URL, "http://"), 1)
			if err == nil || res == nil || res.Message != want {
				t.Errorf("Execute = %+v, %v; want the message %q", res, err, want)
			}
		})
	}
}
