// Package otlp exports the spans and metrics of the OpenTelemetry SDK to an
// OTLP/HTTP endpoint (an OpenTelemetry collector, or a backend that takes
// OTLP) in the JSON encoding of the OTLP specification, without the
// protobuf and gRPC libraries that OpenTelemetry's own exporters link.
//
// [NewSpanExporter] makes an sdk/trace SpanExporter and
// [NewMetricExporter] an sdk/metric Exporter, each from a [Config] that
// [ConfigFromEnv] reads from the environment variables of the OTLP
// exporter specification. A request that fails with 429, 502, 503, 504
// or without an answer for a temporary reason (a timeout, a refused or
// reset connection) is retried with exponential backoff (1 s doubling up
// to 30 s, with jitter, or the answer's Retry-After), each attempt
// bounded by the timeout and all of them by one minute and by the
// caller's context; any other answer or error fails the export at once.
package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"golang.org/x/net/http/httpguts"
)

// DefaultTimeout bounds one request unless OTEL_EXPORTER_OTLP_TIMEOUT says
// otherwise.
const DefaultTimeout = 10 * time.Second

// DefaultEndpoint is the base URL when no endpoint variable is set.
const DefaultEndpoint = "http://localhost:4318"

// Config is where and how an exporter sends one signal. A request whose
// Timeout is zero uses DefaultTimeout.
type Config struct {
	// URL receives the requests, with the signal's path
	// (http://host:4318/v1/traces).
	URL string
	// Headers are added to every request.
	Headers http.Header
	// Timeout bounds each request.
	Timeout time.Duration
	// Gzip compresses the requests' bodies.
	Gzip bool
	// TLS is the client's TLS configuration; nil for the defaults.
	TLS *tls.Config
	// UserAgent is the requests' User-Agent, in the style of the
	// specification's OTel-OTLP-Exporter-Go/1.2.3. Defaults to jobclock.
	UserAgent string
	// ProtobufAsked is set when the protocol variable asks for
	// http/protobuf, which this package answers with http/json.
	ProtobufAsked bool
	// Temporality and Aggregation are the metric exporter's choices.
	Temporality sdkmetric.TemporalitySelector
	Aggregation sdkmetric.AggregationSelector
}

// ConfigFromEnv reads the settings of a signal ("TRACES" or "METRICS")
// from the environment. For each, the signal's variable
// (OTEL_EXPORTER_OTLP_TRACES_HEADERS) wins over the general one
// (OTEL_EXPORTER_OTLP_HEADERS) whole, headers included (they are not
// merged):
//
//	OTEL_EXPORTER_OTLP_ENDPOINT          base URL; the signal's path /v1/traces or /v1/metrics is appended
//	OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT the URL, used as it is (/ when it has no path)
//	..._HEADERS                          key=value pairs separated by commas, values percent-decoded
//	..._TIMEOUT                          milliseconds per request (10000)
//	..._COMPRESSION                      gzip or none (none)
//	..._CERTIFICATE                      PEM file of the CAs that verify the endpoint
//	..._CLIENT_CERTIFICATE, ..._CLIENT_KEY  PEM files of the client's certificate and key
//	..._PROTOCOL                         http/json; http/protobuf is accepted and sent as http/json
//	                                     (Config.ProtobufAsked); grpc is an error
//	OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE      cumulative (default), delta or lowmemory
//	OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION explicit_bucket_histogram (default) or
//	                                     base2_exponential_bucket_histogram
//
// An unusable value is an error that names the variable.
func ConfigFromEnv(signal string) (Config, error) {
	cfg := Config{Timeout: DefaultTimeout, Temporality: sdkmetric.DefaultTemporalitySelector, Aggregation: sdkmetric.DefaultAggregationSelector}
	get := func(name string) (value, variable string) {
		for _, v := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_" + name, "OTEL_EXPORTER_OTLP_" + name} {
			if s := strings.TrimSpace(os.Getenv(v)); s != "" {
				return s, v
			}
		}
		return "", ""
	}
	var err error
	if cfg.URL, err = endpoint(signal); err != nil {
		return cfg, err
	}

	switch p, v := get("PROTOCOL"); p {
	case "", "http/json":
	case "http/protobuf":
		cfg.ProtobufAsked = true
	case "grpc":
		return cfg, fmt.Errorf("%s=grpc: OTLP over gRPC is not supported: use http/json (the collector's port 4318)", v)
	default:
		return cfg, fmt.Errorf("%s=%q: not an OTLP protocol (http/json, http/protobuf or grpc)", v, p)
	}

	// The signal's headers replace the general ones whole, as in
	// OpenTelemetry's exporters: a signal sent to an endpoint of its own
	// does not carry the credentials meant for the general one.
	s, v := get("HEADERS")
	if cfg.Headers, err = parseHeaders(s); err != nil {
		return cfg, fmt.Errorf("%s: %w", v, err)
	}

	if s, v := get("TIMEOUT"); s != "" {
		ms, err := strconv.Atoi(s)
		if err != nil || ms <= 0 {
			return cfg, fmt.Errorf("%s=%q: want a positive number of milliseconds", v, s)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}

	switch s, v := get("COMPRESSION"); s {
	case "", "none":
	case "gzip":
		cfg.Gzip = true
	default:
		return cfg, fmt.Errorf("%s=%q: want gzip or none", v, s)
	}

	if cfg.TLS, err = tlsConfig(signal, get); err != nil {
		return cfg, err
	}

	if signal == "METRICS" {
		const tv = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
		switch s := strings.TrimSpace(os.Getenv(tv)); strings.ToLower(s) {
		case "", "cumulative":
		case "delta":
			cfg.Temporality = sdkmetric.DeltaTemporalitySelector
		case "lowmemory":
			cfg.Temporality = sdkmetric.LowMemoryTemporalitySelector
		default:
			return cfg, fmt.Errorf("%s=%q: want cumulative, delta or lowmemory", tv, s)
		}
		const av = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"
		switch s := strings.TrimSpace(os.Getenv(av)); strings.ToLower(s) {
		case "", "explicit_bucket_histogram":
		case "base2_exponential_bucket_histogram":
			cfg.Aggregation = func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
				if k == sdkmetric.InstrumentKindHistogram {
					return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
				}
				return sdkmetric.DefaultAggregationSelector(k)
			}
		default:
			return cfg, fmt.Errorf("%s=%q: want explicit_bucket_histogram or base2_exponential_bucket_histogram", av, s)
		}
	}
	return cfg, nil
}

// endpoint returns the URL of a signal's requests.
func endpoint(signal string) (string, error) {
	path := "/v1/" + strings.ToLower(signal)
	v := "OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"
	raw := strings.TrimSpace(os.Getenv(v))
	if raw == "" {
		v = "OTEL_EXPORTER_OTLP_ENDPOINT"
		raw = strings.TrimSpace(os.Getenv(v))
		if raw == "" {
			raw = DefaultEndpoint
		}
	} else {
		path = "" // used as it is
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s=%q: want an http:// or https:// URL with a host", v, raw)
	}
	if path != "" {
		u.Path = strings.TrimSuffix(u.Path, "/") + path
	} else if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// parseHeaders parses "k1=v1,k2=v2" with percent-encoded values. Its
// errors name the pair by position or by key, never show a value: the
// values are often credentials.
func parseHeaders(s string) (http.Header, error) {
	h := http.Header{}
	for i, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("pair %d: want key=value", i+1)
		}
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("pair %d: %q is not a header name", i+1, k)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("header %s: the value has a malformed %%-escape", k)
		}
		if !httpguts.ValidHeaderFieldValue(val) {
			return nil, fmt.Errorf("header %s: the value holds a control character", k)
		}
		h.Set(k, val)
	}
	return h, nil
}

// tlsConfig reads the CA and client certificate files; nil when none is
// set.
func tlsConfig(signal string, get func(string) (string, string)) (*tls.Config, error) {
	ca, caVar := get("CERTIFICATE")
	cert, certVar := get("CLIENT_CERTIFICATE")
	key, keyVar := get("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caVar, err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", caVar, ca)
		}
	}
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			set, missing := certVar, "CLIENT_KEY"
			if cert == "" {
				set, missing = keyVar, "CLIENT_CERTIFICATE"
			}
			return nil, fmt.Errorf("%s is set without OTEL_EXPORTER_OTLP_%s_%s or OTEL_EXPORTER_OTLP_%s: a client certificate and its key go together",
				set, signal, missing, missing)
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certVar, keyVar, err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
