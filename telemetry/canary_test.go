package telemetry_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/azure"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/internal/testcert"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
	"github.com/jobclock/scheduler/telemetry"
)

// canary is the secret the canary tests look for; canaryControl is a
// value stored in clear next to the secrets (a user name, a queue name),
// which the searches must find, or they prove nothing.
const (
	canary        = "CANARY7f3a9"
	canaryControl = "CONTROLe4b1"
)

// TestNoSecretAnywhere puts a job of every kind of authentication over the
// REST API, each with a canary in its secrets (password, pfx, OAuth
// secret, SAS token, Service Bus key), runs them with the real executors
// (every attempt fails, as failures say most), and searches everything the
// product writes for the canaries: every span, metric and log record,
// history entry, error and API response, and, for the stores that keep
// data at rest, the SQLite database with its WAL, and a pg_dump of the
// PostgreSQL schema. The memory store runs without a key (it keeps the
// secrets as given, in memory only); the others with one.
func TestNoSecretAnywhere(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		canaryScenario(t, memory.New(), nil, nil)
	})
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "jobs.db")
		st, err := sqlite.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		files := func() string {
			var b strings.Builder
			for _, f := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
				data, err := os.ReadFile(f)
				if err == nil {
					b.Write(data)
				}
			}
			return b.String()
		}
		canaryScenario(t, st, canaryKeys(t), func() []string {
			open := files() // with the WAL not yet checkpointed
			if !strings.Contains(open, canaryControl) {
				t.Errorf("the database and its WAL do not hold the control value %q: the search proves nothing", canaryControl)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			return []string{open, files()}
		})
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("JOBCLOCK_POSTGRES_DSN")
		if dsn == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("JOBCLOCK_POSTGRES_DSN is not set; start PostgreSQL with scripts/start-postgres.sh")
			}
			t.Skip("JOBCLOCK_POSTGRES_DSN is not set; run eval \"$(bash scripts/start-postgres.sh DIR)\" first")
		}
		pgDump := findPgDump()
		if pgDump == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("pg_dump not found under /usr/lib/postgresql/*/bin or in PATH; scripts/start-postgres.sh installs it")
			}
			t.Skip("pg_dump not found")
		}
		ctx := context.Background()
		schema := fmt.Sprintf("canary_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
		st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			st.Close()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Logf("drop schema %s: %v", schema, err)
				return
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
				t.Logf("drop schema %s: %v", schema, err)
			}
		}()
		canaryScenario(t, st, canaryKeys(t), func() []string {
			out, err := exec.Command(pgDump, "--dbname="+dsn, "--schema="+schema, "--no-owner").Output()
			if err != nil {
				t.Fatalf("pg_dump: %v", err)
			}
			if !strings.Contains(string(out), canaryControl) {
				t.Errorf("the pg_dump of schema %s does not hold the control value %q: the search proves nothing", schema, canaryControl)
			}
			return []string{string(out)}
		})
	})
}

// findPgDump returns the path of the newest pg_dump of Debian's
// postgresql packages, else the one in PATH; empty when there is none.
func findPgDump() string {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_dump")
	if len(found) > 0 {
		slices.SortFunc(found, func(a, b string) int {
			va, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(a))))
			vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(b))))
			return va - vb
		})
		return found[len(found)-1]
	}
	p, _ := exec.LookPath("pg_dump")
	return p
}

func canaryKeys(t *testing.T) *secrets.Keyring {
	t.Helper()
	k, _, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	r, err := secrets.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// canaryScenario runs the canary jobs over st with keys and searches
// everything recorded, and what atRest returns once the scheduler has
// stopped (nil: nothing at rest), for the canaries.
func canaryScenario(t *testing.T, st scheduler.Store, keys *secrets.Keyring, atRest func() []string) {
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "oauth2") {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		http.Error(w, "nope", http.StatusInternalServerError)
	}))
	defer target.Close()
	pfxPassword := "pfx-" + canary
	pfx, _ := testcert.Pfx(t, "canary", pfxPassword)
	basicHeader := base64.StdEncoding.EncodeToString([]byte("alice:pw-" + canary))
	// The pfx whole, and a piece of it, in case it is stored re-wrapped.
	canaries := []string{canary, pfx, pfx[len(pfx)/2 : len(pfx)/2+40], basicHeader}

	o := newOtel()
	var logs syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := &action.Registry{}
	web := httpaction.New(&httpaction.Options{Client: target.Client(), Timeout: 5 * time.Second})
	reg.Register(action.HTTP, web)
	reg.Register(action.HTTPS, web)
	azure.Register(reg, &azure.Options{
		StorageQueue: &storagequeue.Options{Endpoint: storagequeue.PathStyle("http://127.0.0.1:1"), Envelope: true, Timeout: 5 * time.Second},
		ServiceBus:   &servicebus.Options{Endpoint: func(string) string { return "127.0.0.1:1" }, UseDevelopmentEmulator: true, Timeout: 5 * time.Second},
	})
	defer reg.Close(context.Background())
	done := make(chan scheduler.HistoryEntry, 20)
	cfg := o.config(scheduler.Config{Logger: logger, Executors: reg, PollInterval: 50 * time.Millisecond, Secrets: keys,
		OnHistory: func(h scheduler.HistoryEntry) { done <- h }}, telemetry.Options{MetricsByJob: true})
	s, err := scheduler.New(st, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	api := httptest.NewServer(httpapi.New(s, &httpapi.Options{Logger: logger, Observer: cfg.Observer.(*telemetry.Observer)}))
	defer api.Close()
	c := httpapi.NewClient(api.URL, nil)
	ref := httpapi.CollectionRef{Subscription: "sub", ResourceGroup: "rg", Collection: "jc"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	none := `"retryPolicy": {"retryType": "None"}`
	jobs := map[string]string{
		"basic": fmt.Sprintf(`{"type": "Https", "request": {"uri": %q, "method": "POST",
			"authentication": {"type": "Basic", "username": "alice", "password": "pw-%s"}}, %s}`, target.URL+"/basic", canary, none),
		"cert": fmt.Sprintf(`{"type": "Https", "request": {"uri": %q, "method": "GET",
			"authentication": {"type": "ClientCertificate", "pfx": %q, "password": %q}}, %s}`, target.URL+"/cert", pfx, pfxPassword, none),
		"oauth": fmt.Sprintf(`{"type": "Https", "request": {"uri": %q, "method": "GET",
			"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t1", "audience": "https://api", "clientId": "app",
			"secret": "oauth-%s", "authority": %q}}, %s}`, target.URL+"/oauth", canary, target.URL+"/", none),
		"queue": fmt.Sprintf(`{"type": "StorageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "jobs",
			"sasToken": "?sv=2019-02-02&sp=a&sig=%s", "message": "%s"}, %s}`, canary, canaryControl, none),
		"bus": fmt.Sprintf(`{"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "contoso-sb", "queueName": "jobs",
			"authentication": {"type": "SharedAccessKey", "sasKeyName": "send", "sasKey": "key-%s"}, "message": "hi"}, %s}`, canary, none),
	}
	var everything strings.Builder
	for name, act := range jobs {
		body := `{"properties": {"action": ` + act + `}}`
		job, _, err := c.PutJobJSON(ctx, ref, name, []byte(body), nil)
		if err != nil {
			t.Fatalf("PutJob %s: %v", name, err)
		}
		fmt.Fprintf(&everything, "%+v\n", job)
	}
	// A refused request is logged (at Debug) with its span's trace id; this
	// one has a password and is refused for sending it over http.
	insecure := fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET",
		"authentication": {"type": "Basic", "username": "alice", "password": "pw-%s"}}}}}`, canary)
	_, _, err = c.PutJobJSON(ctx, ref, "insecure", []byte(insecure), nil)
	if err == nil {
		t.Fatal("PutJob with a password over http succeeded, want 400")
	}
	fmt.Fprintln(&everything, err)
	failed := 0
	for range jobs {
		select {
		case h := <-done:
			if h.Status == scheduler.StatusFailed {
				failed++
			}
			fmt.Fprintf(&everything, "%+v\n", h)
		case <-time.After(20 * time.Second):
			t.Fatal("the jobs did not run within 20s")
		}
	}
	if failed != len(jobs) {
		t.Errorf("%d of %d attempts failed, want all (failures describe the most)", failed, len(jobs))
	}
	// What the API returns: the jobs and their history.
	for name := range jobs {
		job, err := c.GetJob(ctx, ref, name)
		if err != nil {
			t.Fatal(err)
		}
		hist, err := c.ListHistory(ctx, ref, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal([]any{job, hist})
		everything.Write(b)
		// The pfx is sealed, but the certificate is still described.
		if au := job.Properties.Action.Request; name == "cert" && (au == nil || au.Authentication == nil || au.Authentication.CertificateSubjectName != "CN=canary") {
			t.Errorf("GET job cert does not describe its certificate: %s", b)
		}
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Something is recorded for each job, or the search proves nothing.
	for _, sp := range o.spans.Ended() {
		fmt.Fprintf(&everything, "%s %v %v %v %v %v\n", sp.Name(), sp.Attributes(), sp.Events(), sp.Status(), sp.Links(), sp.Resource())
	}
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&everything, "%+v\n", rm)
	everything.WriteString(logs.String())
	traced := map[string]bool{}
	for _, sp := range o.ended("jobclock.attempt") {
		traced[fmt.Sprint(attrMap(sp.Attributes())["jobclock.job"])] = true
	}
	for name := range jobs {
		if !traced[name] {
			t.Errorf("no attempt span of job %s was recorded (attempts of %v)", name, traced)
		}
	}
	all := everything.String()
	if !strings.Contains(all, "PUT /subscriptions/{subscriptionId}") || !strings.Contains(logs.String(), "trace_id=") {
		t.Errorf("the REST API's spans or the log's trace ids are missing from what was recorded")
	}
	if !strings.Contains(all, canaryControl) || !strings.Contains(all, "insecure") {
		t.Errorf("the API responses or errors are missing from what was recorded")
	}
	places := map[string]string{"telemetry, history, errors and API responses": all}
	if atRest != nil {
		for i, data := range atRest() {
			places[fmt.Sprintf("data at rest (%d)", i)] = data
		}
	}
	for where, data := range places {
		for _, secret := range canaries {
			if i := strings.Index(data, secret); i >= 0 {
				t.Errorf("secret %.20q... found in %s: ...%q...", secret, where, data[max(i-200, 0):min(i+len(secret)+50, len(data))])
			}
		}
	}
}
