package http_test

import (
	"context"
	"errors"
	"fmt"
	nethttp "net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
)

// FuzzExecute checks that no action makes Execute panic, that every
// failure comes with a message, and that secrets never reach it. Requests
// are served in process, without a network.
func FuzzExecute(f *testing.F) {
	f.Add("https://target.test/x", "GET", "X-A", "b", "", "", "hunter2-secret", "", "ok")
	f.Add("http://target.test/", "post", "Host", "other", "Basic", "user", "hunter2-secret", "", "\xff\xfe")
	f.Add("https://target.test/", "PUT", "x-ms-scheduler-jobid", "forged", "ClientCertificate", "", "hunter2-secret", "not base64!", "")
	f.Add("https://target.test/", "GET", "", "", "ActiveDirectoryOAuth", "c", "hunter2-secret", "", "")
	f.Add("ftp://x", "G E T", "bad header", "v\r\nx", "Kerberos", "", "", "AAAA", "")
	f.Add("http://[::1", "", "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, uri, method, hname, hvalue, authType, user, secret, pfx, respBody string) {
		watchdog := time.AfterFunc(5*time.Second, func() {
			panic(fmt.Sprintf("Execute hangs on %q", []string{uri, method, hname, hvalue, authType, user, secret, pfx, respBody}))
		})
		defer watchdog.Stop()
		target := nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
			// Echo everything back, secrets included.
			w.Header().Set("X-Echo", r.Header.Get("Authorization"))
			w.WriteHeader(nethttp.StatusBadRequest)
			w.Write([]byte(respBody + r.Header.Get("Authorization") + secret))
		})
		ex := httpaction.New(&httpaction.Options{
			Timeout:   time.Second,
			Authority: "https://login.test/",
			Client:    &nethttp.Client{Transport: inProcess{"target.test": target}},
		})
		defer ex.Close()
		req := newRequest(method, uri)
		req.Action.Request.Headers = map[string]string{hname: hvalue}
		if authType != "" {
			req.Action.Request.Authentication = &action.Authentication{
				Type: action.AuthType(authType), Username: user, Password: secret, Pfx: pfx,
				Tenant: "t", Audience: "a", ClientID: user, Secret: secret,
			}
		}
		res, err := ex.Execute(context.Background(), req)
		if err == nil {
			t.Fatalf("Execute succeeded against a server that answers 400: %+v", res)
		}
		if res == nil || res.Message == "" {
			t.Fatalf("Execute error %v came without a message", err)
		}
		if !utf8.ValidString(res.Message) {
			t.Errorf("Message is not valid UTF-8: %q", res.Message)
		}
		if authType != "" && len(secret) >= 4 && action.AuthType(authType).Valid() {
			if strings.Contains(res.Message, secret) || strings.Contains(err.Error(), secret) {
				t.Errorf("secret %q leaked: %q / %v", secret, res.Message, err)
			}
		}
		var se *httpaction.StatusError
		var re *httpaction.RequestError
		var fe *httpaction.FieldError
		if !errors.As(err, &se) && !errors.As(err, &re) && !errors.As(err, &fe) {
			t.Errorf("Execute error %T (%v) is none of the documented types", err, err)
		}
	})
}
