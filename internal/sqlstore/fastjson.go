package sqlstore

import (
	"encoding/json"
	"strconv"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// The status, schedule and history entry of a job are written and read
// on every occurrence. The functions below write them field by field, and
// read back what they write, without reflection. They produce exactly the
// bytes encoding/json writes (HTML escaping on), and read exactly what it
// reads, for the values they handle: strings of printable ASCII that need
// no escaping, times of years 0 to 9999, and, when reading, documents laid
// out as they write them. Anything else (a string to escape, a time that
// encoding/json refuses, a document written another way) makes them
// report false, and the caller uses encoding/json instead.

// jsonWriter appends JSON to b; ok turns false at the first value it does
// not handle.
type jsonWriter struct {
	b     []byte
	ok    bool
	first bool // no member written yet in the current object
}

func (w *jsonWriter) key(k string) {
	if w.first {
		w.first = false
	} else {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

// plainString reports whether encoding/json writes s as its bytes in
// quotes: printable ASCII other than the quote, the backslash and the
// characters it escapes for HTML.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

func (w *jsonWriter) str(k, s string) {
	if !plainString(s) {
		w.ok = false
		return
	}
	w.key(k)
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

func (w *jsonWriter) int(k string, n int) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(n), 10)
}

func (w *jsonWriter) bool(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// time writes t in UTC as time.Time's MarshalJSON does.
func (w *jsonWriter) time(k string, t time.Time) {
	t = UTC(t)
	if y := t.Year(); y < 0 || y > 9999 {
		w.ok = false // encoding/json reports an error
		return
	}
	w.key(k)
	w.b = append(w.b, '"')
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	w.b = append(w.b, '"')
}

// The ...IfSet methods write a member only when its value is not the zero
// value, for the members that encoding/json leaves out then (omitempty,
// omitzero).

func (w *jsonWriter) strIfSet(k, s string) {
	if s != "" {
		w.str(k, s)
	}
}

func (w *jsonWriter) intIfSet(k string, n int) {
	if n != 0 {
		w.int(k, n)
	}
}

func (w *jsonWriter) timeIfSet(k string, t time.Time) {
	if !t.IsZero() {
		w.time(k, t)
	}
}

func (w *jsonWriter) trueIfSet(k string, v bool) {
	if v {
		w.bool(k, true)
	}
}

func (w *jsonWriter) open() {
	w.b = append(w.b, '{')
	w.first = true
}

func (w *jsonWriter) close() {
	w.b = append(w.b, '}')
	w.first = false
}

// appendStatus appends s as JSON, its times in UTC; false when it cannot.
func appendStatus(b []byte, s *scheduler.JobStatus) ([]byte, bool) {
	w := jsonWriter{b: b, ok: true}
	w.open()
	if s.LastExecutionTime != nil {
		w.time("lastExecutionTime", *s.LastExecutionTime)
	}
	if s.NextExecutionTime != nil {
		w.time("nextExecutionTime", *s.NextExecutionTime)
	}
	w.int("executionCount", s.ExecutionCount)
	w.int("failureCount", s.FailureCount)
	w.int("faultedCount", s.FaultedCount)
	w.close()
	return w.b, w.ok
}

func (w *jsonWriter) occurrence(k string, o *scheduler.Occurrence) {
	if o == nil {
		return
	}
	w.key(k)
	w.open()
	w.intIfSet("number", o.Number)
	w.time("expected", o.Expected)
	w.strIfSet("tag", o.Tag)
	w.trueIfSet("manual", o.Manual)
	w.trueIfSet("errorAction", o.ErrorAction)
	w.intIfSet("retry", o.Retry)
	w.timeIfSet("at", o.At)
	w.strIfSet("trace", o.Trace)
	w.strIfSet("traceState", o.TraceState)
	w.close()
}

// appendSchedule appends s as JSON, its times in UTC; false when it
// cannot.
func appendSchedule(b []byte, s *scheduler.JobSchedule) ([]byte, bool) {
	w := jsonWriter{b: b, ok: true}
	w.open()
	w.timeIfSet("dueAt", s.DueAt)
	w.timeIfSet("anchor", s.Anchor)
	w.timeIfSet("nextOccurrence", s.NextOccurrence)
	w.intIfSet("occurrences", s.Occurrences)
	w.intIfSet("counted", s.Counted)
	w.occurrence("current", s.Current)
	w.occurrence("waiting", s.Waiting)
	w.timeIfSet("runRequested", s.RunRequested)
	w.strIfSet("runTrace", s.RunTrace)
	w.strIfSet("runTraceState", s.RunTraceState)
	w.trueIfSet("lastFailed", s.LastFailed)
	w.close()
	return w.b, w.ok
}

// appendHistory appends h as JSON, its times in UTC; false when it cannot.
func appendHistory(b []byte, h *scheduler.HistoryEntry) ([]byte, bool) {
	w := jsonWriter{b: b, ok: true}
	w.open()
	w.str("collection", h.Collection)
	w.str("job", h.Job)
	w.str("actionName", string(h.ActionName))
	w.str("status", string(h.Status))
	w.time("expectedExecutionTime", h.ExpectedExecutionTime)
	w.time("startTime", h.StartTime)
	w.time("endTime", h.EndTime)
	w.int("retryCount", h.RetryCount)
	w.int("repeatCount", h.RepeatCount)
	w.strIfSet("message", h.Message)
	w.strIfSet("executionTag", h.ExecutionTag)
	w.trueIfSet("faulted", h.Faulted)
	w.close()
	return w.b, w.ok
}

// jsonReader reads a document laid out as jsonWriter writes it; ok turns
// false at the first byte it does not expect.
type jsonReader struct {
	s     string
	i     int
	ok    bool
	first bool
}

func (r *jsonReader) byte(c byte) bool {
	if r.ok && r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *jsonReader) open() {
	if !r.byte('{') {
		r.ok = false
	}
	r.first = true
}

// close reports whether the object ends here (and reads its end).
func (r *jsonReader) close() bool {
	if r.byte('}') {
		r.first = false
		return true
	}
	return false
}

// key reads member k if it comes next, with the comma before it.
func (r *jsonReader) key(k string) bool {
	if !r.ok {
		return false
	}
	i := r.i
	if !r.first {
		if i >= len(r.s) || r.s[i] != ',' {
			return false
		}
		i++
	}
	if len(r.s)-i < len(k)+3 || r.s[i] != '"' || r.s[i+1:i+1+len(k)] != k || r.s[i+1+len(k)] != '"' || r.s[i+2+len(k)] != ':' {
		return false
	}
	r.i = i + len(k) + 3
	r.first = false
	return true
}

// str reads a string of plain characters (see plainString).
func (r *jsonReader) str() string {
	if !r.byte('"') {
		r.ok = false
		return ""
	}
	start := r.i
	for r.i < len(r.s) && r.s[r.i] != '"' {
		r.i++
	}
	s := r.s[start:r.i]
	if r.i == len(r.s) || !plainString(s) {
		r.ok = false
		return ""
	}
	r.i++
	return s
}

// int reads an integer as JSON writes one (no sign but minus, no leading
// zero) that fits an int. A fraction or exponent after it is not the
// comma or brace a document laid out as expected has next.
func (r *jsonReader) int() int {
	if !r.ok {
		return 0
	}
	start := r.i
	if r.i < len(r.s) && r.s[r.i] == '-' {
		r.i++
	}
	digits := r.i
	for r.i < len(r.s) && '0' <= r.s[r.i] && r.s[r.i] <= '9' {
		r.i++
	}
	if r.i == digits || (r.s[digits] == '0' && r.i > digits+1) {
		r.ok = false
		return 0
	}
	n, err := strconv.ParseInt(r.s[start:r.i], 10, strconv.IntSize)
	if err != nil {
		r.ok = false
	}
	return int(n)
}

// true reads the literal true (members written only when true).
func (r *jsonReader) true() bool {
	if r.ok && len(r.s)-r.i >= 4 && r.s[r.i:r.i+4] == "true" {
		r.i += 4
		return true
	}
	r.ok = false
	return false
}

// time reads a time as time.Time's UnmarshalJSON does.
func (r *jsonReader) time() time.Time {
	if !r.byte('"') {
		r.ok = false
		return time.Time{}
	}
	start := r.i
	for r.i < len(r.s) && r.s[r.i] != '"' {
		r.i++
	}
	if r.i == len(r.s) {
		r.ok = false
		return time.Time{}
	}
	var t time.Time
	if err := t.UnmarshalText([]byte(r.s[start:r.i])); err != nil {
		r.ok = false
	}
	r.i++
	return t
}

func (r *jsonReader) timep() *time.Time {
	t := r.time()
	return &t
}

// end reports whether the whole document was read.
func (r *jsonReader) end() bool { return r.ok && r.i == len(r.s) }

// readStatus reads into s (zero) a status as appendStatus writes it;
// false when the text is laid out otherwise.
func readStatus(text string, s *scheduler.JobStatus) bool {
	r := jsonReader{s: text, ok: true}
	r.open()
	if r.key("lastExecutionTime") {
		s.LastExecutionTime = r.timep()
	}
	if r.key("nextExecutionTime") {
		s.NextExecutionTime = r.timep()
	}
	if r.key("executionCount") {
		s.ExecutionCount = r.int()
	}
	if r.key("failureCount") {
		s.FailureCount = r.int()
	}
	if r.key("faultedCount") {
		s.FaultedCount = r.int()
	}
	return r.close() && r.end()
}

func (r *jsonReader) occurrence() *scheduler.Occurrence {
	o := new(scheduler.Occurrence)
	r.open()
	if r.key("number") {
		o.Number = r.int()
	}
	if r.key("expected") {
		o.Expected = r.time()
	}
	if r.key("tag") {
		o.Tag = r.str()
	}
	if r.key("manual") {
		o.Manual = r.true()
	}
	if r.key("errorAction") {
		o.ErrorAction = r.true()
	}
	if r.key("retry") {
		o.Retry = r.int()
	}
	if r.key("at") {
		o.At = r.time()
	}
	if r.key("trace") {
		o.Trace = r.str()
	}
	if r.key("traceState") {
		o.TraceState = r.str()
	}
	if !r.close() {
		r.ok = false
	}
	return o
}

// readSchedule reads into s (zero) a schedule as appendSchedule writes
// it; false when the text is laid out otherwise.
func readSchedule(text string, s *scheduler.JobSchedule) bool {
	r := jsonReader{s: text, ok: true}
	r.open()
	if r.key("dueAt") {
		s.DueAt = r.time()
	}
	if r.key("anchor") {
		s.Anchor = r.time()
	}
	if r.key("nextOccurrence") {
		s.NextOccurrence = r.time()
	}
	if r.key("occurrences") {
		s.Occurrences = r.int()
	}
	if r.key("counted") {
		s.Counted = r.int()
	}
	if r.key("current") {
		s.Current = r.occurrence()
	}
	if r.key("waiting") {
		s.Waiting = r.occurrence()
	}
	if r.key("runRequested") {
		s.RunRequested = r.time()
	}
	if r.key("runTrace") {
		s.RunTrace = r.str()
	}
	if r.key("runTraceState") {
		s.RunTraceState = r.str()
	}
	if r.key("lastFailed") {
		s.LastFailed = r.true()
	}
	return r.close() && r.end()
}

// unmarshalStatus decodes text into s as json.Unmarshal does.
func unmarshalStatus(text string, s *scheduler.JobStatus) error {
	if readStatus(text, s) {
		return nil
	}
	*s = scheduler.JobStatus{}
	return json.Unmarshal([]byte(text), s)
}

// unmarshalSchedule decodes text into s as json.Unmarshal does.
func unmarshalSchedule(text string, s *scheduler.JobSchedule) error {
	if readSchedule(text, s) {
		return nil
	}
	*s = scheduler.JobSchedule{}
	return json.Unmarshal([]byte(text), s)
}
