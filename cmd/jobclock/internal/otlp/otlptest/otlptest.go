// Package otlptest is an OTLP/HTTP receiver for tests. It decodes what it
// receives with the protobuf library's JSON mapping and the OTLP
// definitions, so that a test reads a request member by member as a
// collector would, after checking what that mapping lets through but OTLP
// does not (member names in snake_case, 64-bit integers as numbers, enums
// by name). Only tests import it.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Unmarshal decodes an OTLP JSON message into m. OTLP writes trace and
// span ids in hex where the protobuf JSON mapping has base64, so they are
// turned into base64 first; every other member follows the mapping, and
// an unknown member is an error. Where the mapping lets a reader accept
// more than OTLP lets a writer send, Unmarshal refuses it (see [Strict]).
func Unmarshal(data []byte, m proto.Message) error {
	var doc any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return err
	}
	if err := Strict(doc, m.ProtoReflect().Descriptor(), "$"); err != nil {
		return err
	}
	if err := hexIDs(doc); err != nil {
		return err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return protojson.Unmarshal(b, m)
}

// Strict checks a decoded JSON document (with json.Number for numbers)
// against the message it encodes, as the OTLP specification's JSON
// encoding wants it written: member names in lowerCamelCase (protobuf's
// JSON name, not the field's own snake_case name), 64-bit integers as
// strings and enums as numbers. The protobuf JSON mapping accepts the
// other forms, so without this check a writer could send them unnoticed.
// path names the member at fault in the error ("$" for the document).
func Strict(v any, md protoreflect.MessageDescriptor, path string) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: want an object for %s", path, md.FullName())
	}
	for key, e := range obj {
		fd := md.Fields().ByJSONName(key)
		if fd == nil {
			return fmt.Errorf("%s.%s: not a member of %s in lowerCamelCase", path, key, md.FullName())
		}
		p := path + "." + key
		if !fd.IsList() {
			if err := strictValue(e, fd, p); err != nil {
				return err
			}
			continue
		}
		list, ok := e.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array", p)
		}
		for i, x := range list {
			if err := strictValue(x, fd, fmt.Sprintf("%s[%d]", p, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// strictValue checks one value of a field (one element of a list).
func strictValue(v any, fd protoreflect.FieldDescriptor, path string) error {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return Strict(v, fd.Message(), path)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: a 64-bit integer, want a string, got %v", path, v)
		}
	case protoreflect.EnumKind:
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("%s: an enum, want a number, got %v", path, v)
		}
	}
	return nil
}

func hexIDs(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				id, err := hex.DecodeString(s)
				if err != nil {
					return fmt.Errorf("%s %q is not hex: %w", k, s, err)
				}
				v[k] = base64.StdEncoding.EncodeToString(id)
				continue
			}
			if err := hexIDs(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := hexIDs(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// A Reply is an answer a test gives instead of the Collector's.
type Reply struct {
	Status int
	Header http.Header
	// Body is the answer's body; the status text when empty.
	Body string
}

// Collector is an http.Handler that takes OTLP/HTTP JSON requests at
// /v1/traces and /v1/metrics and keeps what it decoded. A request that is
// not JSON, or does not decode, gets 400 and is counted in Rejected.
type Collector struct {
	// Answer, when set, is asked before each request is decoded (n counts
	// the requests from 1); a Reply it returns is answered instead, nil
	// lets the Collector decode the request and answer.
	Answer func(n int, r *http.Request) *Reply

	mu       sync.Mutex
	n        int
	traces   []*coltracepb.ExportTraceServiceRequest
	metrics  []*colmetricpb.ExportMetricsServiceRequest
	headers  []http.Header
	rejected []string
}

func (c *Collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.n++
	n := c.n
	c.headers = append(c.headers, r.Header.Clone())
	c.mu.Unlock()
	if c.Answer != nil {
		if a := c.Answer(n, r); a != nil {
			for k, vs := range a.Header {
				w.Header()[k] = vs
			}
			if a.Body == "" {
				http.Error(w, http.StatusText(a.Status), a.Status)
				return
			}
			w.WriteHeader(a.Status)
			io.WriteString(w, a.Body)
			return
		}
	}
	reject := func(msg string) {
		c.mu.Lock()
		c.rejected = append(c.rejected, msg)
		c.mu.Unlock()
		http.Error(w, msg, http.StatusBadRequest)
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			reject(err.Error())
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil || r.Header.Get("Content-Type") != "application/json" {
		reject(fmt.Sprintf("want a JSON body, got Content-Type %q (%v)", r.Header.Get("Content-Type"), err))
		return
	}
	// The request to decode, where to keep it, and the answer.
	var req, resp proto.Message
	var keep func()
	switch r.URL.Path {
	case "/v1/traces":
		tr := &coltracepb.ExportTraceServiceRequest{}
		req, resp, keep = tr, &coltracepb.ExportTraceServiceResponse{}, func() { c.traces = append(c.traces, tr) }
	case "/v1/metrics":
		mr := &colmetricpb.ExportMetricsServiceRequest{}
		req, resp, keep = mr, &colmetricpb.ExportMetricsServiceResponse{}, func() { c.metrics = append(c.metrics, mr) }
	default:
		http.NotFound(w, r)
		return
	}
	if err := Unmarshal(data, req); err != nil {
		reject(fmt.Sprintf("%s: %v in %s", r.URL.Path, err, data))
		return
	}
	c.mu.Lock()
	keep()
	c.mu.Unlock()
	out, _ := protojson.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// Requests returns how many requests arrived, answered or not.
func (c *Collector) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Headers returns the headers of every request, in order.
func (c *Collector) Headers() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]http.Header(nil), c.headers...)
}

// Rejected returns why requests were answered 400.
func (c *Collector) Rejected() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.rejected...)
}

// Traces returns the trace requests decoded.
func (c *Collector) Traces() []*coltracepb.ExportTraceServiceRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*coltracepb.ExportTraceServiceRequest(nil), c.traces...)
}

// Metrics returns the metric requests decoded.
func (c *Collector) Metrics() []*colmetricpb.ExportMetricsServiceRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*colmetricpb.ExportMetricsServiceRequest(nil), c.metrics...)
}

// Spans returns every span received.
func (c *Collector) Spans() []*tracepb.Span {
	var out []*tracepb.Span
	for _, req := range c.Traces() {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				out = append(out, ss.GetSpans()...)
			}
		}
	}
	return out
}

// MetricNames returns the names of the metrics received.
func (c *Collector) MetricNames() map[string]bool {
	names := map[string]bool{}
	for _, req := range c.Metrics() {
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					names[m.GetName()] = true
				}
			}
		}
	}
	return names
}
