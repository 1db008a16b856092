package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestServeAdmissionFlags: with one write at a time and a wait of a
// millisecond, concurrent PUTs beyond the first are answered 429 with
// Retry-After and the ARM error; with -no-api-limit none is.
func TestServeAdmissionFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	bin := buildJobclock(t)
	for _, tc := range []struct {
		name string
		args []string
		shed bool
	}{
		{"limited", []string{"-api-writes", "1", "-api-wait", "1ms"}, true},
		{"unlimited", []string{"-no-api-limit"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tokens, token := writeTokens(t, dir)
			srv := startServe(t, bin, append([]string{"-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "x.db"), "-tokens", tokens, "-no-throttle"}, tc.args...)...)
			var (
				mu     sync.Mutex
				shed   int
				errs   []string
				wg     sync.WaitGroup
				client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			)
			for c := range 16 {
				wg.Go(func() {
					for i := range 10 {
						req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/subscriptions/sub-tls/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc-%d-%d?api-version=2016-03-01", srv.url, c, i),
							strings.NewReader(`{"location": "West Europe", "properties": {}}`))
						req.Header.Set("Authorization", "Bearer "+token)
						resp, err := client.Do(req)
						if err != nil {
							t.Error(err)
							return
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						mu.Lock()
						switch {
						case resp.StatusCode == http.StatusCreated:
						case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "1" && strings.Contains(string(body), `"code":"TooManyRequests"`):
							shed++
						default:
							errs = append(errs, fmt.Sprintf("%d %s Retry-After %q", resp.StatusCode, body, resp.Header.Get("Retry-After")))
						}
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			for _, e := range errs {
				t.Errorf("PUT answered %s; want 201, or 429 with Retry-After 1 and code TooManyRequests", e)
			}
			if tc.shed != (shed > 0) {
				t.Errorf("%d of 160 concurrent PUTs were shed; want some: %v", shed, tc.shed)
			}
			srv.stop(t)
		})
	}
}
