// Command example shows what the scheduler reports to OpenTelemetry: it
// runs three jobs against a local receiver for about a second, with an
// OpenTelemetry SDK whose exporters print to stdout, then prints the
// metrics.
//
//	go run ./telemetry/example
//
// The jobs: "hello" succeeds; "flaky" fails, is retried once, fails again
// and runs its errorAction; "manual" is run with RunJob from inside a span
// that stands for an incoming request, so its attempt continues that
// request's trace. The receiver prints the traceparent header each request
// carries: its trace id is the attempt's, its parent the HTTP client span.
//
// A host wires the SDK the same way, with real exporters (OTLP, the
// Prometheus exporter) in place of the printer and the manual reader used
// here, and opts in with an Observer of package telemetry; see its
// documentation.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/telemetry"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "telemetry:", err)
		os.Exit(1)
	}
}

// run runs the example, writing everything to out.
func run(ctx context.Context, out io.Writer) error {
	var mu sync.Mutex // out is shared by the receiver, the span printer and run
	print := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format, args...)
	}

	// The receiver: /fail answers 503, anything else 200.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	receiver := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		print("receiver  %s %s traceparent=%s\n", r.Method, r.URL.Path, r.Header.Get("traceparent"))
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})}
	go receiver.Serve(ln)
	defer receiver.Close()
	base := "http://" + ln.Addr().String()

	// The SDK: spans go to a printer as they end; metrics are read once,
	// at the end.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spanPrinter{print}))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(ctx)
	defer mp.Shutdown(ctx)

	done := make(chan scheduler.HistoryEntry, 16)
	s, err := scheduler.New(memory.New(), &scheduler.Config{
		Observer:         telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp}),
		InstanceID:       "example",
		MinRetryInterval: 100 * time.Millisecond,
		PollInterval:     50 * time.Millisecond,
		Logger:           slog.New(slog.DiscardHandler),
		OnHistory:        func(h scheduler.HistoryEntry) { done <- h },
	})
	if err != nil {
		return err
	}
	if _, err := s.PutCollection(ctx, "demo", nil, nil); err != nil {
		return err
	}
	opts := &scheduler.ParseOptions{MinRetryInterval: 100 * time.Millisecond}
	jobs := map[string]string{
		"hello": `{"action": {"type": "Http", "request": {"uri": "` + base + `/hello", "method": "POST"}}}`,
		"flaky": `{"action": {"type": "Http", "request": {"uri": "` + base + `/fail", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT0.2S", "retryCount": 1},
			"errorAction": {"type": "Http", "request": {"uri": "` + base + `/alert", "method": "POST"}}}}`,
		// Due in a day: it runs now only because RunJob asks.
		"manual": `{"startTime": "` + time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339) + `",
			"action": {"type": "Http", "request": {"uri": "` + base + `/manual", "method": "POST"}}}`,
	}
	for _, name := range []string{"hello", "flaky", "manual"} {
		job, err := scheduler.ParseJob([]byte(jobs[name]), opts)
		if err != nil {
			return fmt.Errorf("job %s: %w", name, err)
		}
		if _, err := s.PutJob(ctx, "demo", name, job, nil); err != nil {
			return fmt.Errorf("job %s: %w", name, err)
		}
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	// A span standing for the request that asks for the run.
	reqCtx, request := tp.Tracer("example").Start(ctx, "POST /jobs/manual/run")
	if _, err := s.RunJob(reqCtx, "demo", "manual"); err != nil {
		return err
	}
	request.End()

	// hello 1, flaky 2 + 1, manual 1 history entries.
	for range 5 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("the jobs did not run within 10s")
		}
	}
	var rm metricdata.ResourceMetrics // read before Stop, which ends the gauges
	if err := reader.Collect(ctx, &rm); err != nil {
		return err
	}
	if err := s.Stop(ctx); err != nil {
		return err
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, line := range points(m) {
				print("metric    %s%s\n", m.Name, line)
			}
		}
	}
	return nil
}

// spanPrinter is a span exporter that prints one line per span.
type spanPrinter struct{ print func(string, ...any) }

func (p spanPrinter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	for _, s := range spans {
		parent := "none"
		if s.Parent().IsValid() {
			parent = s.Parent().SpanID().String()
		}
		p.print("span      %s trace=%s span=%s parent=%s %s %s\n", s.Name(), s.SpanContext().TraceID(),
			s.SpanContext().SpanID(), parent, s.EndTime().Sub(s.StartTime()).Round(time.Millisecond), attrs(s.Attributes()))
	}
	return nil
}

func (spanPrinter) Shutdown(context.Context) error { return nil }

func attrs(kvs []attribute.KeyValue) string {
	var parts []string
	for _, kv := range kvs {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, " ") + "}"
}

// points formats the data points of a metric, one per line.
func points(m metricdata.Metrics) []string {
	var out []string
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, fmt.Sprintf("%s = %d", attrs(p.Attributes.ToSlice()), p.Value))
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, fmt.Sprintf("%s = %d", attrs(p.Attributes.ToSlice()), p.Value))
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, fmt.Sprintf("%s count=%d sum=%.3f%s", attrs(p.Attributes.ToSlice()), p.Count, p.Sum, m.Unit))
		}
	}
	slices.Sort(out)
	return out
}
