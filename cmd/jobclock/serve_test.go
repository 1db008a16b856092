package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// buildJobclock builds the command into a temporary directory and
// returns the binary's path.
func buildJobclock(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "jobclock")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// server is a "jobclock serve" subprocess.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe starts "BIN serve ARGS" and waits until it prints the address
// it listens on.
func startServe(t *testing.T, bin string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv := &server{cmd: cmd, stderr: new(syncBuffer), done: make(chan error, 1)}
	cmd.Stderr = srv.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-srv.done
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		srv.done <- cmd.Wait()
		close(srv.done)
	}()
	select {
	case line := <-lines:
		u, ok := strings.CutPrefix(line, "jobclock: listening on ")
		if !ok {
			t.Fatalf("first line of serve = %q, want the listening address", line)
		}
		srv.url = u
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not print its address within 20s; stderr:\n%s", srv.stderr)
	}
	return srv
}

// stop sends SIGTERM and checks that serve exits with status 0.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM; stderr:\n%s", err, s.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not exit within 20s of SIGTERM; stderr:\n%s", s.stderr)
	}
}

// eventually polls f until it returns nil, for at most 15s.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after 15s", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeEndToEnd runs "jobclock serve" on a SQLite file: jobs created
// over HTTP fire against a local receiver, their history pages and
// filters, and a restart on the same file keeps everything.
func TestServeEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	endToEnd(t, "-db", filepath.Join(t.TempDir(), "jobclock.db"))
}

// TestServeEndToEndPostgres is TestServeEndToEnd on PostgreSQL, in a
// schema of its own; it needs JOBCLOCK_POSTGRES_DSN.
func TestServeEndToEndPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dsn := os.Getenv("JOBCLOCK_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("JOBCLOCK_POSTGRES_DSN is not set")
		}
		t.Skip("JOBCLOCK_POSTGRES_DSN is not set")
	}
	schema := fmt.Sprintf("serve_e2e_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	endToEnd(t, "-postgres", dsn, "-schema", schema, "-engine-conns", "1")
}

func endToEnd(t *testing.T, storeArgs ...string) {
	var hits, fails atomic.Int32
	var jobHeader atomic.Value
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/fail") {
			fails.Add(1)
			http.Error(w, "broken on purpose", http.StatusInternalServerError)
			return
		}
		hits.Add(1)
		jobHeader.Store(r.Header.Get("x-ms-scheduler-jobid"))
		w.Write([]byte("thanks"))
	}))
	defer receiver.Close()

	dir := t.TempDir()
	const token = "e2e-token-0123456789abcdef"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("# test tokens\n"+token+" sub-e2e\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-addr", "127.0.0.1:0", "-tokens", tokens, "-min-retry-interval", "1s", "-v", "-log-format", "json"}, storeArgs...)
	bin := buildJobclock(t)
	srv := startServe(t, bin, args...)
	ctx := context.Background()
	c := httpapi.NewClient(srv.url, &httpapi.ClientOptions{Token: token})
	ref := httpapi.CollectionRef{Subscription: "sub-e2e", ResourceGroup: "rg", Collection: "jc"}

	// Without a token: 401.
	var re *httpapi.ResponseError
	_, err := httpapi.NewClient(srv.url, nil).GetCollection(ctx, ref)
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GetCollection without a token: err = %v, want a 401 ResponseError", err)
	}

	if _, created, err := c.PutCollection(ctx, ref, nil, nil); err != nil || !created {
		t.Fatalf("PutCollection = created %v, %v; want created", created, err)
	}
	// A one-shot job without startTime runs as soon as it is created.
	ok := fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": %q, "method": "POST", "body": "hi"}}}}`, receiver.URL+"/ok")
	if _, created, err := c.PutJobJSON(ctx, ref, "once", json.RawMessage(ok), nil); err != nil || !created {
		t.Fatalf("PutJob once = created %v, %v", created, err)
	}
	// A failing job with one retry a second later: it ends Faulted with
	// two Failed history entries.
	fail := fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": %q, "method": "GET"},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1S", "retryCount": 1}}}}`, receiver.URL+"/fail")
	if _, _, err := c.PutJobJSON(ctx, ref, "broken", json.RawMessage(fail), nil); err != nil {
		t.Fatalf("PutJob broken: %v", err)
	}
	// A job with a password: sealed with DB.key, created next to a SQLite
	// database; refused on PostgreSQL, where no key was given.
	secret := `{"properties": {"state": "Disabled", "action": {"type": "Https", "request": {"uri": "https://127.0.0.1:1/x", "method": "GET",
		"authentication": {"type": "Basic", "username": "u", "password": "pw"}}}}}`
	_, _, err = c.PutJobJSON(ctx, ref, "secret", json.RawMessage(secret), nil)
	if storeArgs[0] == "-db" {
		if err != nil {
			t.Errorf("PutJob with a password on SQLite: %v", err)
		}
		if fi, err := os.Stat(storeArgs[1] + ".key"); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("key file next to the database: %v, %v; want a 0600 file", fi, err)
		}
	} else if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "action.request.authentication.password") {
		t.Errorf("PutJob with a password on PostgreSQL without a key = %v, want 400 naming the field", err)
	}

	eventually(t, "job once completes", func() error {
		j, err := c.GetJob(ctx, ref, "once")
		if err != nil {
			return err
		}
		if j.Properties.State != scheduler.JobCompleted {
			return fmt.Errorf("state %s", j.Properties.State)
		}
		return nil
	})
	if n := hits.Load(); n != 1 {
		t.Errorf("receiver got %d requests for job once, want 1", n)
	}
	if got, want := jobHeader.Load(), "once"; got != nil && !strings.Contains(got.(string), "once") {
		t.Errorf("x-ms-scheduler-jobid = %q, want it to name %q", got, want)
	}
	eventually(t, "job broken faults", func() error {
		j, err := c.GetJob(ctx, ref, "broken")
		if err != nil {
			return err
		}
		if j.Properties.State != scheduler.JobFaulted {
			return fmt.Errorf("state %s", j.Properties.State)
		}
		return nil
	})
	if n := fails.Load(); n != 2 {
		t.Errorf("receiver got %d requests for job broken, want 2 (one retry)", n)
	}

	h, err := c.ListHistory(ctx, ref, "once", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Value) != 1 || h.Value[0].Properties.Status != scheduler.StatusCompleted || h.NextLink != nil {
		t.Fatalf("history of once = %+v, want one Completed entry and no nextLink", h)
	}
	all, err := c.ListHistory(ctx, ref, "broken", &httpapi.ListOptions{Filter: "status eq failed"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Value) != 2 {
		t.Fatalf("Failed history of broken has %d entries, want 2", len(all.Value))
	}
	if r0, r1 := all.Value[0].Properties.RetryCount, all.Value[1].Properties.RetryCount; r0 != 1 || r1 != 0 {
		t.Errorf("retryCounts newest first = %d, %d; want 1, 0", r0, r1)
	}
	// The log says so: a JSON line per attempt (-v) and a WARN line for
	// the faulted occurrence, all with the occurrence's tag.
	eventually(t, "the log of broken's attempts", func() error {
		var attempts, faulted []string // their tags
		for _, l := range logRecords(t, srv.stderr.String()) {
			if l["job"] != "broken" || !strings.HasSuffix(fmt.Sprint(l["collection"]), "jc") || l["execution_tag"] == "" {
				continue
			}
			switch tag := fmt.Sprint(l["execution_tag"]); {
			case l["level"] == "INFO" && l["msg"] == "attempt" && l["status"] == "Failed":
				attempts = append(attempts, tag)
			case l["level"] == "WARN" && l["msg"] == "occurrence faulted" && l["attempts"] == 2.0 && strings.Contains(fmt.Sprint(l["message"]), "500"):
				faulted = append(faulted, tag)
			}
		}
		if len(attempts) != 2 || len(faulted) != 1 || attempts[0] != faulted[0] || attempts[1] != faulted[0] {
			return fmt.Errorf("attempt lines with tags %q and faulted lines with tags %q, want 2 and 1 of one tag:\n%s", attempts, faulted, srv.stderr)
		}
		return nil
	})
	if !(all.Value[0].ID < all.Value[1].ID) {
		t.Errorf("history IDs %q, %q do not sort newest first", all.Value[0].ID, all.Value[1].ID)
	}
	p1, err := c.ListHistory(ctx, ref, "broken", &httpapi.ListOptions{Filter: "status eq Failed", Top: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p1.Value) != 1 || p1.NextLink == nil || !strings.Contains(*p1.NextLink, "$skip=1") {
		t.Fatalf("first page = %d entries, nextLink %v; want 1 entry and a nextLink with $skip=1", len(p1.Value), p1.NextLink)
	}
	// Follow the nextLink as a client would.
	req, _ := http.NewRequest("GET", *p1.NextLink, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var p2 httpapi.JobHistoryListResult
	err = json.NewDecoder(resp.Body).Decode(&p2)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET nextLink: status %d, %v", resp.StatusCode, err)
	}
	if len(p2.Value) != 1 || p2.NextLink != nil || p2.Value[0].ID != all.Value[1].ID {
		t.Fatalf("second page = %+v, want the older entry and no nextLink", p2)
	}

	beforeJobs, err := c.ListJobs(ctx, ref, nil)
	if err != nil {
		t.Fatal(err)
	}

	// Restart on the same database: everything is still there.
	srv.stop(t)
	if !strings.Contains(srv.stderr.String(), "shutting down") {
		t.Errorf("serve log lacks the shutdown message:\n%s", srv.stderr)
	}
	srv2 := startServe(t, bin, args...)
	c2 := httpapi.NewClient(srv2.url, &httpapi.ClientOptions{Token: token})
	afterJobs, err := c2.ListJobs(ctx, ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(beforeJobs, afterJobs); diff != "" {
		t.Errorf("jobs after restart differ (-before +after):\n%s", diff)
	}
	all2, err := c2.ListHistory(ctx, ref, "broken", &httpapi.ListOptions{Filter: "status eq failed"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, all2); diff != "" {
		t.Errorf("history after restart differs (-before +after):\n%s", diff)
	}
	if n := hits.Load() + fails.Load(); n != 3 {
		t.Errorf("receiver got %d requests in all, want 3 (nothing re-run after the restart)", n)
	}
	srv2.stop(t)
}

// logRecords returns the JSON log lines of serve's stderr.
func logRecords(t *testing.T, stderr string) []map[string]any {
	var out []map[string]any
	for line := range strings.Lines(stderr) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestServeRefusesOpenNonLoopback(t *testing.T) {
	t.Setenv(httpapi.TokensEnv, "")
	var out, errb bytes.Buffer
	code := serveCmd([]string{"-addr", "0.0.0.0:0", "-db", filepath.Join(t.TempDir(), "x.db")}, &out, &errb)
	if code != 2 {
		t.Fatalf("serve -addr 0.0.0.0:0 without tokens = %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "without authentication") {
		t.Errorf("stderr = %q, want it to explain the refusal", errb.String())
	}
}

func TestServeUsageErrors(t *testing.T) {
	t.Setenv(httpapi.TokensEnv, "")
	dir := t.TempDir()
	bad := filepath.Join(dir, "tokens")
	os.WriteFile(bad, []byte("short sub1\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"extra argument", []string{"extra"}, `unexpected argument "extra"`},
		{"db and postgres", []string{"-db", "x.db", "-postgres", "postgres://x"}, "cannot be used together"},
		{"schema without postgres", []string{"-schema", "x"}, "-schema needs -postgres"},
		{"engine conns without postgres", []string{"-engine-conns", "3"}, "-engine-conns needs -postgres"},
		{"no engine conns", []string{"-postgres", "postgres://x", "-engine-conns", "0"}, "-engine-conns must be at least 1"},
		{"log format", []string{"-log-format", "yaml"}, `-log-format "yaml": use text or json`},
		{"bad token file", []string{"-tokens", bad}, "token entry 1"},
		{"missing token file", []string{"-tokens", filepath.Join(dir, "nope")}, "read token file"},
		{"negative retry", []string{"-min-retry-interval", "-1s"}, "negative"},
		{"short lease", []string{"-lease", "999ms"}, "-lease 999ms is shorter than 1s"},
		{"claim ahead beyond the lease", []string{"-claim-ahead", "1001ms"}, "-claim-ahead 1.001s is longer than a tenth of -lease (10s)"},
		{"claim ahead beyond a short lease", []string{"-lease", "2s", "-claim-ahead", "201ms"}, "-claim-ahead 201ms is longer than a tenth of -lease (2s)"},
		{"negative claim ahead", []string{"-claim-ahead", "-1ms"}, "-claim-ahead -1ms is negative"},
		{"bad claim ahead", []string{"-claim-ahead", "soon"}, `invalid value "soon" for flag -claim-ahead`},
		{"negative firing window", []string{"-firing-window", "-1ms"}, "-firing-window -1ms is negative"},
		{"firing window beyond the default claim ahead", []string{"-firing-window", (scheduler.DefaultClaimAhead + time.Millisecond).String()},
			"-firing-window " + (scheduler.DefaultClaimAhead + time.Millisecond).String() + " is longer than -claim-ahead (" + scheduler.DefaultClaimAhead.String() + ")"},
		{"firing window beyond claim ahead", []string{"-claim-ahead", "10ms", "-firing-window", "11ms"}, "-firing-window 11ms is longer than -claim-ahead (10ms)"},
		{"firing window without claiming ahead", []string{"-claim-ahead", "0", "-firing-window", "1ms"}, "-firing-window 1ms applies to jobs claimed ahead, and -claim-ahead 0 claims none ahead"},
		{"bad firing window", []string{"-firing-window", "soon"}, `invalid value "soon" for flag -firing-window`},
		{"unknown flag", []string{"-port", "80"}, "flag provided but not defined"},
		{"cert without key", []string{"-tls-cert", "c.pem"}, "-tls-cert and -tls-key go together"},
		{"key without cert", []string{"-tls-key", "k.pem"}, "-tls-cert and -tls-key go together"},
		{"missing cert files", []string{"-tls-cert", filepath.Join(dir, "nope.pem"), "-tls-key", filepath.Join(dir, "nope.key")}, "nope.pem"},
		{"bad cert files", []string{"-tls-cert", bad, "-tls-key", bad}, "failed to find any PEM data"},
		{"negative reload interval", []string{"-tls-reload-interval", "-1s"}, "-tls-reload-interval is negative"},
		{"no reads", []string{"-throttle-reads", "0"}, "-throttle-reads must be at least 1"},
		{"no writes", []string{"-throttle-writes", "-5"}, "-throttle-writes must be at least 1"},
		{"no window", []string{"-throttle-window", "0s"}, "-throttle-window must be positive"},
		{"no api reads", []string{"-api-reads", "0"}, "-api-reads must be at least 1"},
		{"no api writes", []string{"-api-writes", "-1"}, "-api-writes must be at least 1"},
		{"no api wait", []string{"-api-wait", "0s"}, "-api-wait must be positive"},
		{"no sign-in failures", []string{"-signin-failures", "0"}, "-signin-failures must be at least 1"},
		{"no sign-in failures overall", []string{"-signin-failures-overall", "-1"}, "-signin-failures-overall must be at least 1"},
		{"no sign-in window", []string{"-signin-window", "0s"}, "-signin-window must be positive"},
		{"no sign-in wait", []string{"-signin-wait", "0s"}, "-signin-wait must be positive"},
		{"bad trusted proxy", []string{"-trusted-proxies", "10.0.0.0/8,proxy.example"}, `"proxy.example" is neither an IP address nor a CIDR network`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := serveCmd(tt.args, &out, &errb); code != 2 {
				t.Errorf("serveCmd(%q) = %d, want 2", tt.args, code)
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("serveCmd(%q) stderr = %q, want it to contain %q", tt.args, errb.String(), tt.want)
			}
		})
	}
}

// TestServeFiringWindowFlag: -firing-window unset leaves the scheduler's
// default (Config.FiringWindow zero), 0 starts each job claimed ahead at
// its own instant, and a duration is the FiringWindow, up to the
// -claim-ahead given or the scheduler's default one.
func TestServeFiringWindowFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want time.Duration
	}{
		{"unset", nil, 0},
		{"unset without claiming ahead", []string{"-claim-ahead", "0"}, 0},
		{"off", []string{"-firing-window", "0"}, scheduler.NoFiringWindow},
		{"set", []string{"-firing-window", "5ms"}, 5 * time.Millisecond},
		{"the default claim ahead", []string{"-firing-window", scheduler.DefaultClaimAhead.String()}, scheduler.DefaultClaimAhead},
		{"the claim ahead given", []string{"-claim-ahead", "200ms", "-firing-window", "200ms"}, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			c := addClaimAheadFlag(fs)
			f := addFiringWindowFlag(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			ahead, err := c.config(10 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.config(ahead)
			if err != nil || got != tt.want {
				t.Errorf("-firing-window from %q = %v, %v; want %v", tt.args, got, err, tt.want)
			}
			// The scheduler takes what the flags give.
			if _, err := scheduler.New(memory.New(), &scheduler.Config{ClaimAhead: ahead, FiringWindow: got}); err != nil {
				t.Errorf("scheduler.New with %q: %v", tt.args, err)
			}
		})
	}
}

func TestServeLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:80": true, "[::1]:0": true, "127.1.2.3:1": true,
		":8080": false, "0.0.0.0:80": false, "10.0.0.1:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := serveLoopback(addr); got != want {
			t.Errorf("serveLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestServeClaimAheadFlag: -claim-ahead unset leaves the scheduler's
// default (Config.ClaimAhead zero), 0 turns claiming ahead off, and a
// duration is the ClaimAhead.
func TestServeClaimAheadFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want time.Duration
	}{
		{"unset", nil, 0},
		{"off", []string{"-claim-ahead", "0"}, scheduler.NoClaimAhead},
		{"set", []string{"-claim-ahead", "30ms"}, 30 * time.Millisecond},
		{"a tenth of the lease", []string{"-claim-ahead", "1s"}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			c := addClaimAheadFlag(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got, err := c.config(10 * time.Second)
			if err != nil || got != tt.want {
				t.Errorf("-claim-ahead from %q = %v, %v; want %v", tt.args, got, err, tt.want)
			}
		})
	}
}

// TestServePortInUse: serve on an address in use exits 1 and leaves no
// database nor key file behind: it opens the listener before the store.
func TestServePortInUse(t *testing.T) {
	t.Setenv(httpapi.TokensEnv, "")
	t.Setenv(keyEnv, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "x.db")
	var out, errb bytes.Buffer
	if code := serveCmd([]string{"-addr", ln.Addr().String(), "-db", db}, &out, &errb); code != 1 {
		t.Errorf("serve on an address in use = %d, want 1; stderr:\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "address already in use") {
		t.Errorf("stderr = %q, want it to say the address is in use", errb.String())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("serve on an address in use left %s behind", e.Name())
	}
}

// TestServeMissingDirectory: serve with a database in a directory that
// does not exist names that directory, not the key file it would have
// written there.
func TestServeMissingDirectory(t *testing.T) {
	t.Setenv(httpapi.TokensEnv, "")
	t.Setenv(keyEnv, "")
	missing := filepath.Join(t.TempDir(), "nonexist", "dir")
	var out, errb bytes.Buffer
	if code := serveCmd([]string{"-addr", "127.0.0.1:0", "-db", filepath.Join(missing, "x.db")}, &out, &errb); code != 1 {
		t.Errorf("serve with a missing directory = %d, want 1", code)
	}
	want := "-db " + filepath.Join(missing, "x.db") + ": the directory " + missing + " does not exist"
	if !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), ".jobclock-key") {
		t.Errorf("stderr = %q, want it to contain %q and no key file", errb.String(), want)
	}
}
