package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/cmd/jobclock/internal/otlp"
	"github.com/jobclock/scheduler/cmd/jobclock/internal/promtext"
	"github.com/jobclock/scheduler/telemetry"
)

// observeUsage is the part of run's and serve's help about telemetry.
const observeUsage = `Metrics and traces: -metrics-addr serves the scheduler's metrics in the
Prometheus text format at /metrics, with /healthz and /readyz, on a
loopback address unless a host is given (":9464" is 127.0.0.1:9464), as
scrapers carry no token. Traces and metrics also go to an OpenTelemetry
collector over OTLP/HTTP in its JSON encoding when
OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) is set; the other OTEL_* variables
(headers, timeout, compression, certificates, OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_METRIC_EXPORT_INTERVAL,
OTEL_TRACES_EXPORTER=none, OTEL_METRICS_EXPORTER=none, OTEL_SDK_DISABLED)
apply as the OpenTelemetry specification says. The protocol is http/json;
OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf sends http/json too (with a
warning), grpc is refused. Without them nothing is exported.

Profiles: -pprof serves the Go runtime's profiles (net/http/pprof) at
/debug/pprof/ on the -metrics-addr listener, for an operator to take a
CPU profile of the running server (go tool pprof
http://127.0.0.1:9464/debug/pprof/profile?seconds=30, under 60 s),
a heap profile or a goroutine dump. Like the metrics, they carry no token.
`

// observeFlags are the telemetry flags of run and serve.
type observeFlags struct {
	metricsAddr *string
	pprof       bool // -pprof
	// otlp holds the OTLP settings check read, so that the environment
	// and the certificate files are read once.
	otlp map[string]otlp.Config
}

func addObserveFlags(fs *flag.FlagSet) *observeFlags {
	f := &observeFlags{
		metricsAddr: fs.String("metrics-addr", "", "serve /metrics (Prometheus), /healthz and /readyz on `host:port` (\":9464\" means 127.0.0.1:9464)"),
	}
	fs.BoolVar(&f.pprof, "pprof", false, "also serve the Go runtime's profiles (net/http/pprof) at /debug/pprof/ on -metrics-addr")
	return f
}

// metricsListenAddr returns the address to listen on for -metrics-addr:
// a loopback host when none is given.
func metricsListenAddr(addr string) string {
	if !strings.Contains(addr, ":") {
		return net.JoinHostPort("127.0.0.1", addr) // a bare port
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr // net.Listen reports the error
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// check reports a usage error in the telemetry settings: an OTLP variable
// that cannot be used (grpc as the protocol, a malformed header list, ...).
func (f *observeFlags) check() error {
	if f.pprof && *f.metricsAddr == "" {
		return errors.New("-pprof needs -metrics-addr")
	}
	_, err := f.otlpConfigs()
	return err
}

// otlpConfigs returns the OTLP settings of the signals the environment
// asks to export, by signal (TRACES, METRICS): those read by an earlier
// call (check's), or read now.
func (f *observeFlags) otlpConfigs() (map[string]otlp.Config, error) {
	if f.otlp != nil {
		return f.otlp, nil
	}
	cfgs := map[string]otlp.Config{}
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return cfgs, nil
	}
	for _, signal := range []string{"TRACES", "METRICS"} {
		if !otlpWanted(signal) {
			continue
		}
		cfg, err := otlp.ConfigFromEnv(signal)
		if err != nil {
			return nil, fmt.Errorf("OTLP %s: %w", strings.ToLower(signal), err)
		}
		cfg.UserAgent = userAgent()
		cfgs[signal] = cfg
	}
	f.otlp = cfgs
	return cfgs, nil
}

// observability is the OpenTelemetry SDK of a run or serve process, and
// the Observer through which the scheduler and the REST API report to it
// (always set: the command opts in to package telemetry).
type observability struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Observer       *telemetry.Observer
	metrics        http.Handler // the Prometheus exposition; nil without -metrics-addr
	shutdown       []func(context.Context) error
	// stopRetries make the OTLP exporters' exports single requests, so
	// that the flush at exit does not wait out a backoff.
	stopRetries []func()
}

// setupObservability makes the tracer and meter providers: an SDK with the
// exporters the flags and the environment ask for, no-op providers when
// there are none; and the Observer over them, which logs to log. The
// caller calls shutdown when done, which flushes what is buffered.
func setupObservability(ctx context.Context, f *observeFlags, instance string, log *slog.Logger) (*observability, error) {
	o, err := setupProviders(ctx, f, instance, log)
	if err != nil {
		return nil, err
	}
	o.Observer = telemetry.New(&telemetry.Options{TracerProvider: o.TracerProvider, MeterProvider: o.MeterProvider, Logger: log})
	return o, nil
}

// setupProviders makes the tracer and meter providers of
// setupObservability.
func setupProviders(ctx context.Context, f *observeFlags, instance string, log *slog.Logger) (*observability, error) {
	o := &observability{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()}
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return o, nil
	}
	cfgs, err := f.otlpConfigs()
	if err != nil {
		return nil, err
	}
	for signal, cfg := range cfgs {
		if cfg.ProtobufAsked {
			log.Warn("OTLP protocol http/protobuf asked for: sending http/json, which OTLP/HTTP receivers accept as well", "signal", strings.ToLower(signal), "endpoint", cfg.URL)
		}
	}
	traceCfg, traces := cfgs["TRACES"]
	metricCfg, metrics := cfgs["METRICS"]
	if !traces && !metrics && *f.metricsAddr == "" {
		return o, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("jobclock"), semconv.ServiceInstanceID(instance)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	if traces {
		exp := otlp.NewSpanExporter(traceCfg)
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp))
		o.TracerProvider = tp
		o.stopRetries = append(o.stopRetries, exp.StopRetries)
		o.shutdown = append(o.shutdown, tp.Shutdown)
	}
	var readers []sdkmetric.Option
	if metrics {
		exp := otlp.NewMetricExporter(metricCfg)
		o.stopRetries = append(o.stopRetries, exp.StopRetries)
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if *f.metricsAddr != "" {
		reader := sdkmetric.NewManualReader()
		readers = append(readers, sdkmetric.WithReader(reader))
		o.metrics = promtext.Handler(reader)
	}
	if len(readers) > 0 {
		mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		o.MeterProvider = mp
		o.shutdown = append(o.shutdown, mp.Shutdown)
	}
	return o, nil
}

// userAgent is the User-Agent of the OTLP requests: jobclock/ and the
// module version the command was built as ("(devel)" without one).
func userAgent() string {
	version := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		version = info.Main.Version
	}
	return "jobclock/" + cmp.Or(version, "(devel)")
}

// otlpWanted reports whether the environment asks for OTLP export of a
// signal (TRACES or METRICS).
func otlpWanted(signal string) bool {
	if strings.EqualFold(os.Getenv("OTEL_"+signal+"_EXPORTER"), "none") {
		return false
	}
	// Blank is unset, as otlp.ConfigFromEnv reads it.
	return strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" ||
		strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT")) != ""
}

// Shutdown flushes and stops the exporters; an export of the flush is one
// request, not retried, so that the exit does not wait out a backoff
// while the collector is away.
func (o *observability) Shutdown(ctx context.Context) error {
	for _, stop := range o.stopRetries {
		stop()
	}
	var errs []error
	for _, f := range o.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// readyTimeout bounds a readiness check.
const readyTimeout = 3 * time.Second

// withHealth serves /healthz and /readyz without authentication and hands
// every other request to next: /healthz answers 200 while the process
// serves, during its shutdown too; /readyz 200 when the scheduler runs and
// its store answers, 503 with the reason otherwise, and "shutting down"
// from the moment d's shutdown starts, so that a load balancer stops
// sending requests while the attempts in flight drain. Meanwhile next
// serves only reads (GET and HEAD, which the scheduler answers until it
// has stopped); the writes are answered 503 with Retry-After (see
// drain.refuse).
func withHealth(next http.Handler, s *scheduler.Scheduler, d *drain) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if d.draining() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "not ready: shutting down; waiting for the attempts in flight\n")
			return
		}
		if err := s.Ready(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
		io.WriteString(w, "ok\n")
	})
	if next != nil {
		mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if d.draining() && r.Method != http.MethodGet && r.Method != http.MethodHead {
				d.refuse(w, r)
				return
			}
			next.ServeHTTP(w, r)
		}))
	}
	return mux
}

// serveMetrics serves /metrics, /healthz and /readyz on -metrics-addr, if
// given, with the profiles of net/http/pprof under -pprof, and prints
// where; /readyz answers 503 once d's shutdown starts, the others go on
// answering until stop. It returns a func that stops the server.
func serveMetrics(f *observeFlags, o *observability, s *scheduler.Scheduler, d *drain, stdout io.Writer, log *slog.Logger) (stop func(context.Context) error, err error) {
	if *f.metricsAddr == "" {
		return func(context.Context) error { return nil }, nil
	}
	ln, err := net.Listen("tcp", metricsListenAddr(*f.metricsAddr))
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	if !serveLoopback(ln.Addr().String()) {
		log.Warn("serving metrics without authentication on a non-loopback address", "addr", ln.Addr().String())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.metrics)
	health := withHealth(nil, s, d)
	mux.Handle("GET /healthz", health)
	mux.Handle("GET /readyz", health)
	if f.pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index) // and the profiles by name: heap, goroutine, ...
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: serveReadHeaderTimeout, WriteTimeout: serveWriteTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	fmt.Fprintf(stdout, "jobclock: metrics on http://%s/metrics\n", ln.Addr())
	if f.pprof {
		fmt.Fprintf(stdout, "jobclock: profiles on http://%s/debug/pprof/\n", ln.Addr())
	}
	return srv.Shutdown, nil
}

// shutdownObservability flushes the exporters, waiting at most 5s.
func shutdownObservability(o *observability, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.Shutdown(ctx); err != nil {
		log.Warn("flushing telemetry", "err", err)
	}
}
