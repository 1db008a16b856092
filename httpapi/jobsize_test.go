package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/httpapi"
)

// TestJobSizeLimit: the 16,000-byte limit is the definition's, its
// properties as compact JSON: the envelope's tags and the body's
// whitespace do not count, and the error of a definition over it is at
// "properties" with the size measured.
func TestJobSizeLimit(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.open)
	defer srv.Close()
	const jc = "/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc1"
	put := func(path, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, srv.URL+path+v, strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if code, b := put(jc, `{"properties": {}}`); code != http.StatusCreated {
		t.Fatalf("PUT collection: %d %s", code, b)
	}
	// def(n) is a definition of n bytes as compact JSON.
	def := func(n int) string {
		const head, tail = `{"action":{"type":"Http","request":{"uri":"http://example.com/","method":"GET","headers":{"x":"`, `"}}}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	pretty := func(d string) string {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(map[string]any{"tags": map[string]string{"team": "operations"}, "properties": v}, "", "    ")
		return string(b)
	}
	if code, b := put(jc+"/jobs/fits", pretty(def(15990))); code != http.StatusCreated {
		t.Errorf("PUT of a 15,990-byte definition with tags: %d %s, want 201", code, b)
	}
	body := pretty(def(16001))
	code, b := put(jc+"/jobs/over", body)
	var er httpapi.ErrorResponse
	if err := json.Unmarshal(b, &er); err != nil {
		t.Fatalf("PUT of a 16,001-byte definition: %d %s", code, b)
	}
	want := httpapi.ErrorDetail{Code: httpapi.CodeBadRequest, Target: "properties",
		Message: "properties: is 16001 bytes as compact JSON (without whitespace and comments), more than the limit of 16,000"}
	if diff := cmp.Diff(want, er.Error); code != http.StatusBadRequest || diff != "" || len(body) <= 16001 {
		t.Errorf("PUT of a 16,001-byte definition in a %d-byte body: %d, error (-want +got):\n%s", len(body), code, diff)
	}
}
