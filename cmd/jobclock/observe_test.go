package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/cmd/jobclock/internal/otlp/otlptest"
	"github.com/jobclock/scheduler/httpapi"
)

// process is a jobclock subprocess whose stdout lines are kept.
type process struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	mu     sync.Mutex
	lines  []string
	done   chan error
}

// startProcess starts "BIN ARGS..." with env added to the environment and
// waits until it printed want lines on stdout.
func startProcess(t *testing.T, bin string, env []string, want int, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: new(syncBuffer), done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
		}
		p.done <- cmd.Wait()
		close(p.done)
	}()
	eventually(t, "the process prints its addresses", func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.lines) < want {
			return fmt.Errorf("%d lines on stdout; stderr:\n%s", len(p.lines), p.stderr)
		}
		return nil
	})
	return p
}

// addr returns the address printed after prefix, waiting for its line:
// the process prints its addresses one by one, so the line may come after
// the ones startProcess waited for.
func (p *process) addr(t *testing.T, prefix string) string {
	t.Helper()
	var addr string
	eventually(t, "a line "+prefix+"...", func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, l := range p.lines {
			if a, ok := strings.CutPrefix(l, prefix); ok {
				addr = a
				return nil
			}
		}
		return fmt.Errorf("no line %q... in %q", prefix, p.lines)
	})
	return addr
}

func (p *process) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exited with %v after SIGTERM; stderr:\n%s", err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("did not exit within 20s of SIGTERM; stderr:\n%s", p.stderr)
	}
}

// findSpan finds a received span by name and attribute values.
func findSpan(spans []*tracepb.Span, name string, attrs map[string]string) *tracepb.Span {
	for _, sp := range spans {
		if sp.Name != name {
			continue
		}
		match := true
		for k, v := range attrs {
			found := false
			for _, kv := range sp.Attributes {
				found = found || kv.Key == k && kv.Value.GetStringValue() == v
			}
			match = match && found
		}
		if match {
			return sp
		}
	}
	return nil
}

// TestServeObservability runs "jobclock serve" with -metrics-addr and the
// OTLP variables set: after a few jobs ran, /metrics (parsed with the
// Prometheus text parser) counts what the history holds, an OTLP endpoint
// received the spans of the attempts and of the API's requests, and the
// receiver of the HTTP jobs got the attempts' trace context.
func TestServeObservability(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	var mu sync.Mutex
	parents := map[string]string{} // path → traceparent
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		parents[r.URL.Path] = r.Header.Get("traceparent")
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/fail") {
			http.Error(w, "broken on purpose", http.StatusInternalServerError)
		}
	}))
	defer receiver.Close()
	sink := &otlptest.Collector{}
	collector := httptest.NewServer(sink)
	defer collector.Close()

	bin := buildJobclock(t)
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL, "OTEL_BSP_SCHEDULE_DELAY=100",
		"OTEL_METRIC_EXPORT_INTERVAL=300", "OTEL_SERVICE_NAME=jobclock-test", "OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=", "OTEL_METRICS_EXPORTER="}
	p := startProcess(t, bin, env, 2, "serve", "-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "jobclock.db"),
		"-metrics-addr", "127.0.0.1:0", "-min-retry-interval", "1s")
	api, metricsURL := p.addr(t, "jobclock: listening on "), p.addr(t, "jobclock: metrics on ")

	// /healthz and /readyz need no token.
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, api+path); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET %s = %d %q, want 200 ok", path, code, body)
		}
	}

	ctx := context.Background()
	c := httpapi.NewClient(api, nil)
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg", Collection: "jc"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]string{
		"ok": fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": %q, "method": "POST"}}}}`, receiver.URL+"/ok"),
		"flaky": fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": %q, "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1S", "retryCount": 1},
			"errorAction": {"type": "Http", "request": {"uri": %q, "method": "POST"}}}}}`, receiver.URL+"/fail", receiver.URL+"/alert"),
	}
	for name, def := range jobs {
		if _, _, err := c.PutJobJSON(ctx, ref, name, json.RawMessage(def), nil); err != nil {
			t.Fatalf("PutJob %s: %v", name, err)
		}
	}
	states := map[string]string{}
	faulted := 0.0
	for name, want := range map[string]scheduler.JobState{"ok": scheduler.JobCompleted, "flaky": scheduler.JobFaulted} {
		eventually(t, "job "+name+" ends", func() error {
			j, err := c.GetJob(ctx, ref, name)
			if err != nil {
				return err
			}
			if j.Properties.State != want {
				return fmt.Errorf("state %s", j.Properties.State)
			}
			states[name] = string(j.Properties.State)
			faulted += float64(j.Properties.Status.FaultedCount)
			return nil
		})
	}

	// What the history holds, by action and status.
	wantAttempts := map[string]float64{}
	started := 0.0
	for name := range jobs {
		h, err := c.ListHistory(ctx, ref, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range h.Value {
			wantAttempts[string(e.Properties.ActionName)+"/"+string(e.Properties.Status)]++
			if e.Properties.ActionName == scheduler.MainAction && e.Properties.RetryCount == 0 {
				started++
			}
		}
	}
	if wantAttempts["MainAction/Failed"] != 2 || wantAttempts["ErrorAction/Completed"] != 1 || wantAttempts["MainAction/Completed"] != 1 {
		t.Fatalf("history by action and status = %v, want 1 MainAction/Completed, 2 MainAction/Failed, 1 ErrorAction/Completed", wantAttempts)
	}

	families := scrape(t, metricsURL)
	gotAttempts := map[string]float64{}
	for _, m := range family(t, families, "jobclock_attempts_total", dto.MetricType_COUNTER) {
		l := labels(m)
		if l["jobclock_action_type"] != "Http" {
			t.Errorf("jobclock_attempts_total has action type %q, want Http", l["jobclock_action_type"])
		}
		gotAttempts[l["jobclock_action_name"]+"/"+l["jobclock_attempt_outcome"]] += m.GetCounter().GetValue()
	}
	if diff := cmp.Diff(wantAttempts, gotAttempts); diff != "" {
		t.Errorf("jobclock_attempts_total by action and outcome differs from the history (-history +metrics):\n%s", diff)
	}
	if got := sum(family(t, families, "jobclock_occurrences_started_total", dto.MetricType_COUNTER)); got != started {
		t.Errorf("jobclock_occurrences_started_total = %v, want %v (first attempts in the history)", got, started)
	}
	if got := sum(family(t, families, "jobclock_occurrences_faulted_total", dto.MetricType_COUNTER)); got != faulted || faulted != 1 {
		t.Errorf("jobclock_occurrences_faulted_total = %v, want %v (the jobs' faultedCount, 1)", got, faulted)
	}
	if got := family(t, families, "jobclock_occurrence_lateness_seconds", dto.MetricType_HISTOGRAM); len(got) != 1 || float64(got[0].GetHistogram().GetSampleCount()) != started {
		t.Errorf("jobclock_occurrence_lateness_seconds = %v, want one series of %v samples", got, started)
	}
	durations := 0.0
	for _, m := range family(t, families, "jobclock_attempt_duration_seconds", dto.MetricType_HISTOGRAM) {
		durations += float64(m.GetHistogram().GetSampleCount())
	}
	if durations != 4 {
		t.Errorf("jobclock_attempt_duration_seconds counts %v attempts, want 4", durations)
	}
	// The job counts are read at most every 10s (StatsMaxAge), also for
	// the OTLP reader, so they may lag behind.
	eventually(t, "jobclock_jobs counts the jobs by state", func() error {
		fams := scrape(t, metricsURL)
		got := map[string]float64{}
		for _, m := range family(t, fams, "jobclock_jobs", dto.MetricType_GAUGE) {
			l := labels(m)
			got[l["jobclock_collection"]+" "+l["jobclock_job_state"]] += m.GetGauge().GetValue()
		}
		want := map[string]float64{"sub1/rg/jc " + states["ok"]: 1, "sub1/rg/jc " + states["flaky"]: 1}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("(-want +got):\n%s", diff)
		}
		if due := sum(family(t, fams, "jobclock_jobs_due", dto.MetricType_GAUGE)); due != 0 {
			return fmt.Errorf("jobclock_jobs_due = %v, want 0", due)
		}
		return nil
	})
	puts := 0.0
	for _, m := range family(t, families, "http_server_request_duration_seconds", dto.MetricType_HISTOGRAM) {
		l := labels(m)
		if l["http_request_method"] == "PUT" && strings.HasSuffix(l["http_route"], "/jobs/{jobName}") && l["http_response_status_code"] == "201" {
			puts += float64(m.GetHistogram().GetSampleCount())
		}
	}
	if puts != 2 {
		t.Errorf("http_server_request_duration_seconds counts %v PUT job requests with status 201, want 2", puts)
	}
	if len(family(t, families, "go_goroutines", dto.MetricType_GAUGE)) != 1 {
		t.Error("no go_goroutines: the Go runtime's metrics are missing")
	}

	// OTLP: the attempts' spans, the API's server spans and the metrics.
	eventually(t, "the OTLP endpoint receives the spans", func() error {
		spans := sink.Spans()
		switch {
		case len(sink.Rejected()) > 0:
			return fmt.Errorf("the endpoint rejected requests: %q", sink.Rejected())
		case findSpan(spans, "jobclock.attempt", map[string]string{"jobclock.job": "sub1/rg/jc/flaky", "jobclock.action.name": "ErrorAction"}) == nil &&
			findSpan(spans, "jobclock.attempt", map[string]string{"jobclock.job": "flaky", "jobclock.action.name": "ErrorAction"}) == nil:
			return fmt.Errorf("no jobclock.attempt span of flaky's error action")
		case findSpan(spans, "PUT /subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Scheduler/jobCollections/{jobCollectionName}/jobs/{jobName}", nil) == nil:
			return fmt.Errorf("no server span of PUT job")
		}
		if names := sink.MetricNames(); !names["jobclock.attempts"] || !names["http.server.request.duration"] {
			return fmt.Errorf("metrics received: %v", names)
		}
		return nil
	})
	// The receiver joined the attempts' traces.
	mu.Lock()
	okParent := parents["/ok"]
	mu.Unlock()
	var okAttempt *tracepb.Span
	for _, sp := range sink.Spans() {
		if sp.Name == "jobclock.attempt" && strings.Contains(okParent, hex.EncodeToString(sp.TraceId)) {
			okAttempt = sp
		}
	}
	if okAttempt == nil {
		t.Errorf("the receiver's traceparent %q is in no jobclock.attempt span's trace", okParent)
	}
	p.stop(t)
}

// TestServeReadyzFollowsPostgres: /readyz answers 503 while the PostgreSQL
// server is stopped, and 200 again once it is back. The test starts a
// PostgreSQL server of its own with scripts/start-postgres.sh, as the
// shared one serves other tests meanwhile.
func TestServeReadyzFollowsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	if os.Getenv("JOBCLOCK_POSTGRES_DSN") == "" {
		const msg = "JOBCLOCK_POSTGRES_DSN is not set: PostgreSQL is not installed and started (scripts/start-postgres.sh)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	// Not t.TempDir: the postgres user must be able to reach the cluster.
	state, err := os.MkdirTemp("", "jobclock-readyz-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	start := exec.Command("bash", "../../scripts/start-postgres.sh", state)
	var stderr bytes.Buffer
	start.Stderr = &stderr
	out, err := start.Output()
	if err != nil {
		t.Fatalf("start-postgres.sh: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { exec.Command("bash", filepath.Join(state, "postgres.stop")).Run() })
	dsn := ""
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "export JOBCLOCK_POSTGRES_DSN="); ok {
			dsn = strings.Trim(v, "'")
		}
	}
	if dsn == "" {
		t.Fatalf("start-postgres.sh printed no DSN: %q", out)
	}
	ctl := func(verb string) {
		t.Helper()
		if out, err := exec.Command("bash", filepath.Join(state, "postgres.ctl"), verb).CombinedOutput(); err != nil {
			t.Fatalf("postgres.ctl %s: %v\n%s", verb, err, out)
		}
	}

	p := startProcess(t, buildJobclock(t), nil, 1, "serve", "-addr", "127.0.0.1:0", "-postgres", dsn)
	ready := p.addr(t, "jobclock: listening on ") + "/readyz"
	readyz := func(want int, what string) {
		t.Helper()
		eventually(t, what, func() error {
			if code, body := get(t, ready); code != want {
				return fmt.Errorf("GET /readyz = %d %q, want %d", code, body, want)
			}
			return nil
		})
	}
	readyz(http.StatusOK, "ready on a running database")
	ctl("stop")
	readyz(http.StatusServiceUnavailable, "not ready without the database")
	if _, body := get(t, ready); !strings.Contains(body, "store does not answer") {
		t.Errorf("/readyz body %q does not give the reason", body)
	}
	ctl("start")
	readyz(http.StatusOK, "ready once the database is back")
	p.stop(t)
}

// TestRunMetricsAddr: jobclock run serves /metrics, /healthz and /readyz
// with -metrics-addr.
func TestRunMetricsAddr(t *testing.T) {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer receiver.Close()
	job := filepath.Join(t.TempDir(), "tick.json")
	def := fmt.Sprintf(`{"action": {"type": "Http", "request": {"uri": %q, "method": "GET"}}, "recurrence": {"frequency": "Minute"}}`, receiver.URL)
	if err := os.WriteFile(job, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runScheduler(ctx, nil, []string{"-metrics-addr", "127.0.0.1:0", job}, &stdout, &stderr)
	}()
	var base string
	eventually(t, "run prints the metrics address", func() error {
		for _, l := range strings.Split(stderr.String(), "\n") {
			if a, ok := strings.CutPrefix(l, "jobclock: metrics on "); ok {
				base = strings.TrimSuffix(a, "/metrics")
				return nil
			}
		}
		return fmt.Errorf("stderr: %q", stderr.String())
	})
	eventually(t, "the first occurrence is measured", func() error {
		fams := scrape(t, base+"/metrics")
		if sum(fams["jobclock_attempts_total"].GetMetric()) != 1 {
			return fmt.Errorf("jobclock_attempts_total = %v", fams["jobclock_attempts_total"])
		}
		return nil
	})
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, base+path); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET %s = %d %q, want 200 ok", path, code, body)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("run exited with %d; stderr:\n%s", code, stderr.String())
	}
}

func TestMetricsListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		":9464": "127.0.0.1:9464", "9464": "127.0.0.1:9464", "0.0.0.0:9464": "0.0.0.0:9464",
		"[::1]:1": "[::1]:1", "localhost:2": "localhost:2",
	} {
		if got := metricsListenAddr(in); got != want {
			t.Errorf("metricsListenAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOTLPProtobufFallsBackToJSON: asked for http/protobuf, the command
// warns once per signal at start and sends http/json, which the endpoint
// decodes.
func TestOTLPProtobufFallsBackToJSON(t *testing.T) {
	sink := &otlptest.Collector{}
	collector := httptest.NewServer(sink)
	defer collector.Close()
	for k, v := range map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
		"OTEL_SDK_DISABLED": "", "OTEL_TRACES_EXPORTER": "", "OTEL_METRICS_EXPORTER": ""} {
		t.Setenv(k, v)
	}
	var logs bytes.Buffer
	flags := &observeFlags{metricsAddr: new(string)}
	o, err := setupObservability(context.Background(), flags, "i-1", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, span := o.TracerProvider.Tracer("test").Start(context.Background(), "fallback")
	span.End()
	if err := o.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown (flushes the span): %v; rejected: %q", err, sink.Rejected())
	}
	if spans := sink.Spans(); len(spans) != 1 || spans[0].Name != "fallback" {
		t.Errorf("received spans %v, want the one named fallback", spans)
	}
	if ua := sink.Headers()[0].Get("User-Agent"); !strings.HasPrefix(ua, "jobclock/") {
		t.Errorf("User-Agent %q, want jobclock/ and the version", ua)
	}
	for _, signal := range []string{"traces", "metrics"} {
		if want := "sending http/json"; !strings.Contains(logs.String(), want) || !strings.Contains(logs.String(), "signal="+signal) {
			t.Errorf("log %q has no warning %q for %s", logs.String(), want, signal)
		}
	}
}

func TestObserveUsageErrors(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	for _, tt := range []struct{ variable, value, want string }{
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: OTLP over gRPC is not supported"},
		{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "novalue", `OTEL_EXPORTER_OTLP_TRACES_HEADERS: pair 1: want key=value`},
		{"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "10s", `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT="10s": want a positive number of milliseconds`},
	} {
		t.Run(tt.variable, func(t *testing.T) {
			t.Setenv(tt.variable, tt.value)
			var out, errb bytes.Buffer
			if code := serveCmd([]string{"-db", filepath.Join(t.TempDir(), "x.db")}, &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("serve with %s=%s = %d, stderr %q; want 2 and %q", tt.variable, tt.value, code, errb.String(), tt.want)
			}
		})
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads a Prometheus text exposition with the Prometheus parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape: Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse the exposition: %v", err)
	}
	return fams
}

func family(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType) []*dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Errorf("no metric %s", name)
		return nil
	}
	if f.GetType() != typ {
		t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
	}
	return f.GetMetric()
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

func sum(ms []*dto.Metric) float64 {
	s := 0.0
	for _, m := range ms {
		s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return s
}

// TestOTLPBlankEndpoint: an endpoint variable of blanks asks for no export
// (not for one to the default localhost:4318).
func TestOTLPBlankEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", " ")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "\t")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	cfgs, err := (&observeFlags{}).otlpConfigs()
	if err != nil || len(cfgs) != 0 {
		t.Errorf("otlpConfigs with blank endpoints = %v, %v; want none", cfgs, err)
	}
}

// TestOTLPSettingsReadOnce: the settings the usage check read are the
// ones the exporters use; the environment is not read a second time.
func TestOTLPSettingsReadOnce(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	flags := &observeFlags{metricsAddr: new(string)}
	if err := flags.check(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "bad key=x")
	o, err := setupObservability(context.Background(), flags, "i-1", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("setupObservability after check = %v, want the settings check read", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	o.Shutdown(ctx)
}

// TestServePprof: "jobclock serve -pprof" serves the Go runtime's profiles
// beside the metrics, a CPU profile among them; without -pprof there are
// none, and -pprof without -metrics-addr is refused.
func TestServePprof(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := serveCmd([]string{"-pprof", "-db", filepath.Join(t.TempDir(), "jobclock.db")}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "-pprof needs -metrics-addr") {
		t.Errorf("serve -pprof without -metrics-addr = %d, %q; want 2 and what it needs", code, stderr.String())
	}
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	bin := buildJobclock(t)
	for _, pprof := range []bool{false, true} {
		args := []string{"serve", "-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "jobclock.db"), "-metrics-addr", "127.0.0.1:0"}
		if pprof {
			args = append(args, "-pprof")
		}
		p := startProcess(t, bin, nil, 2, args...)
		metricsURL := p.addr(t, "jobclock: metrics on ")
		base := strings.TrimSuffix(metricsURL, "/metrics") + "/debug/pprof/"
		if !pprof {
			if code, _ := get(t, base); code != http.StatusNotFound {
				t.Errorf("without -pprof: GET %s = %d, want 404", base, code)
			}
			p.stop(t)
			continue
		}
		if got := p.addr(t, "jobclock: profiles on "); got != base {
			t.Errorf("serve -pprof printed its profiles on %s, want %s", got, base)
		}
		if code, body := get(t, base+"cmdline"); code != http.StatusOK || !strings.Contains(body, "serve") {
			t.Errorf("GET %scmdline = %d %q, want 200 and the command line", base, code, body)
		}
		code, body := get(t, base+"profile?seconds=1")
		if code != http.StatusOK || !strings.HasPrefix(body, "\x1f\x8b") {
			t.Errorf("GET %sprofile?seconds=1 = %d, %d bytes, want 200 and a gzipped profile", base, code, len(body))
		}
		p.stop(t)
	}
}
