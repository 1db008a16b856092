package main

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/httpapi"
)

// SessionKeyEnv names the environment variable that holds the dashboard's
// session key (64 hexadecimal digits or more), for several serve processes
// behind one address; without it each process makes its own.
const SessionKeyEnv = "JOBCLOCK_SESSION_KEY"

// dashboardPrefix is where serve mounts the dashboard.
const dashboardPrefix = "/ui"

// withDashboard returns the handler of serve: the dashboard at /ui/, a
// redirect there for a browser that asks for /, and the REST API for
// everything else. auth may be nil (no sign-in, as the API has none);
// failures is the budget of failed authentications the API counts in too.
func withDashboard(api http.Handler, s *scheduler.Scheduler, auth httpapi.Authenticator, failures *httpapi.AuthFailures, log *slog.Logger) (http.Handler, error) {
	opts := &dashboard.Options{Prefix: dashboardPrefix, Authenticator: auth, AuthFailures: failures, Logger: log}
	if v := strings.TrimSpace(os.Getenv(SessionKeyEnv)); v != "" {
		key, err := hex.DecodeString(v)
		if err != nil || len(key) < 32 {
			return nil, fmt.Errorf("%s: want at least 64 hexadecimal digits (32 bytes)", SessionKeyEnv)
		}
		opts.SessionKey = key
	}
	ui := dashboard.New(s, opts)
	mux := http.NewServeMux()
	mux.Handle(dashboardPrefix+"/", ui)
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && strings.Contains(r.Header.Get("Accept"), "text/html") {
			http.Redirect(w, r, dashboardPrefix+"/", http.StatusFound)
			return
		}
		api.ServeHTTP(w, r)
	}))
	return mux, nil
}
