package httpapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// The job responses (a job, a page of jobs) are the API's most frequent
// bodies. They are encoded here by hand, field by field in declaration
// order, writing exactly the bytes encoding/json writes for them with
// HTML escaping off (TestEncodeJobMatchesEncodingJSON compares the two on
// random definitions that set every field): without reflection, a job
// costs a fraction of what encoding/json spends on it. What encoding/json
// would refuse (a time outside years 0-9999, invalid raw JSON in a custom
// payload) makes these report false, and the response is then encoded by
// encoding/json, error and all.

// appendResponse appends the JSON of v to b when v is a type encoded
// here; ok is false otherwise.
func appendResponse(b []byte, v any) (_ []byte, ok bool) {
	e := encoder{b: b}
	switch v := v.(type) {
	case JobDefinition:
		e.jobResource(&v)
	case JobListResult:
		e.jobList(&v)
	default:
		return b, false
	}
	if e.failed {
		return b, false
	}
	return e.b, true
}

// encoder appends JSON to b; failed records that a value cannot be
// encoded as encoding/json would.
type encoder struct {
	b      []byte
	failed bool
	// first is whether the object being written has no member yet.
	first bool
}

// open starts an object.
func (e *encoder) open() {
	e.b = append(e.b, '{')
	e.first = true
}

// close ends an object; the enclosing one has a member now.
func (e *encoder) close() {
	e.b = append(e.b, '}')
	e.first = false
}

// key starts the member named k (a plain ASCII name).
func (e *encoder) key(k string) {
	if !e.first {
		e.b = append(e.b, ',')
	}
	e.first = false
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

func (e *encoder) str(k, v string) {
	e.key(k)
	e.b = appendString(e.b, v)
}

// optStr writes a string member unless it is empty (omitempty).
func (e *encoder) optStr(k, v string) {
	if v != "" {
		e.str(k, v)
	}
}

func (e *encoder) int(k string, v int) {
	e.key(k)
	e.b = strconv.AppendInt(e.b, int64(v), 10)
}

func (e *encoder) optInt(k string, v int) {
	if v != 0 {
		e.int(k, v)
	}
}

func (e *encoder) optTime(k string, t *time.Time) {
	if t == nil {
		return
	}
	e.key(k)
	e.b = append(e.b, '"')
	var err error
	// AppendText is the strict RFC 3339 form MarshalJSON writes, with
	// its errors.
	if e.b, err = t.AppendText(e.b); err != nil {
		e.failed = true
	}
	e.b = append(e.b, '"')
}

func (e *encoder) optDuration(k string, d retry.Duration) {
	if d != 0 {
		e.key(k)
		e.b = appendString(e.b, d.String())
	}
}

// optMap writes a map member with its keys in order, unless it is empty.
func (e *encoder) optMap(k string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	e.key(k)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.b = append(e.b, '{')
	for i, k := range keys {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendString(e.b, k)
		e.b = append(e.b, ':')
		e.b = appendString(e.b, m[k])
	}
	e.b = append(e.b, '}')
}

func (e *encoder) optInts(k string, v []int) {
	if len(v) == 0 {
		return
	}
	e.key(k)
	e.b = append(e.b, '[')
	for i, n := range v {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = strconv.AppendInt(e.b, int64(n), 10)
	}
	e.b = append(e.b, ']')
}

func (e *encoder) jobList(l *JobListResult) {
	e.open()
	e.key("value")
	if l.Value == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = append(e.b, '[')
		for i := range l.Value {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.jobResource(&l.Value[i])
		}
		e.b = append(e.b, ']')
	}
	e.key("nextLink")
	if l.NextLink == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.b = appendString(e.b, *l.NextLink)
	}
	e.close()
}

func (e *encoder) jobResource(r *JobDefinition) {
	e.open()
	e.str("id", r.ID)
	e.str("type", r.Type)
	e.str("name", r.Name)
	e.key("properties")
	if j := r.Properties; j == nil {
		e.b = append(e.b, "null"...)
	} else {
		e.job(j, j.State, j.Status)
	}
	e.close()
}

// appendJobRecord appends the JSON of the resource of r in scope sc, as
// writeJSON writes jobResource(sc, r), without building it; ok is false
// when r holds secrets (the resource blanks them) or when the job cannot
// be encoded here.
func appendJobRecord(b []byte, sc scope, r *scheduler.JobRecord) (_ []byte, ok bool) {
	if hasSecrets(&r.Job.Action) {
		return b, false
	}
	e := encoder{b: b}
	e.open()
	e.key("id")
	e.b = append(e.b, '"')
	for _, part := range [...]string{"/subscriptions/", sc.sub, "/resourceGroups/", sc.rg,
		"/providers/Microsoft.Scheduler/jobCollections/", sc.jc, "/jobs/", r.Name} {
		e.b = appendStringContent(e.b, part)
	}
	e.b = append(e.b, '"')
	e.str("type", TypeJob)
	e.key("name")
	e.b = append(e.b, '"')
	e.b = appendStringContent(e.b, sc.jc)
	e.b = append(e.b, '/')
	e.b = appendStringContent(e.b, r.Name)
	e.b = append(e.b, '"')
	e.key("properties")
	// The resource's properties are r.Definition(): the job with the
	// record's state and status.
	e.job(r.Job, r.State, &r.Status)
	e.close()
	if e.failed {
		return b, false
	}
	return e.b, true
}

// job writes j with the given state and status in place of its own.
func (e *encoder) job(j *scheduler.Job, state scheduler.JobState, status *scheduler.JobStatus) {
	e.open()
	e.optTime("startTime", j.StartTime)
	e.key("action")
	e.action(&j.Action)
	if r := j.Recurrence; r != nil {
		e.key("recurrence")
		e.recurrence(r)
	}
	e.optStr("state", string(state))
	if s := status; s != nil {
		e.key("status")
		e.open()
		e.optTime("lastExecutionTime", s.LastExecutionTime)
		e.optTime("nextExecutionTime", s.NextExecutionTime)
		e.int("executionCount", s.ExecutionCount)
		e.int("failureCount", s.FailureCount)
		e.int("faultedCount", s.FaultedCount)
		e.close()
	}
	e.close()
}

func (e *encoder) action(a *action.Action) {
	e.open()
	e.str("type", string(a.Type))
	if r := a.Request; r != nil {
		e.key("request")
		e.open()
		e.str("uri", r.URI)
		e.str("method", r.Method)
		e.optMap("headers", r.Headers)
		e.optStr("body", r.Body)
		if au := r.Authentication; au != nil {
			e.key("authentication")
			e.authentication(au)
		}
		e.close()
	}
	if q := a.QueueMessage; q != nil {
		e.key("queueMessage")
		e.open()
		e.str("storageAccount", q.StorageAccount)
		e.str("queueName", q.QueueName)
		e.str("sasToken", q.SASToken)
		e.str("message", q.Message)
		e.close()
	}
	if q := a.ServiceBusQueueMessage; q != nil {
		e.key("serviceBusQueueMessage")
		e.open()
		e.serviceBusMessage(&q.ServiceBusMessage)
		e.str("queueName", q.QueueName)
		e.close()
	}
	if t := a.ServiceBusTopicMessage; t != nil {
		e.key("serviceBusTopicMessage")
		e.open()
		e.serviceBusMessage(&t.ServiceBusMessage)
		e.str("topicPath", t.TopicPath)
		e.close()
	}
	if len(a.Custom) > 0 {
		e.key("custom")
		// encoding/json compacts what a Marshaler writes, after
		// checking it is valid.
		buf := bytes.NewBuffer(e.b)
		if err := json.Compact(buf, a.Custom); err != nil {
			e.failed = true
		}
		e.b = buf.Bytes()
	}
	if p := a.RetryPolicy; p != nil {
		e.key("retryPolicy")
		e.open()
		e.str("retryType", string(p.Type))
		e.optDuration("retryInterval", p.Interval)
		if p.Count != nil {
			e.int("retryCount", *p.Count)
		}
		e.optDuration("minimumInterval", p.MinimumInterval)
		e.optDuration("maximumInterval", p.MaximumInterval)
		e.close()
	}
	if a.ErrorAction != nil {
		e.key("errorAction")
		e.action(a.ErrorAction)
	}
	e.close()
}

func (e *encoder) authentication(a *action.Authentication) {
	e.open()
	e.str("type", string(a.Type))
	e.optStr("username", a.Username)
	e.optStr("password", a.Password)
	e.optStr("pfx", a.Pfx)
	e.optStr("certificateThumbprint", a.CertificateThumbprint)
	e.optStr("certificateSubjectName", a.CertificateSubjectName)
	e.optTime("certificateExpirationDate", a.CertificateExpirationDate)
	e.optStr("tenant", a.Tenant)
	e.optStr("audience", a.Audience)
	e.optStr("clientId", a.ClientID)
	e.optStr("secret", a.Secret)
	e.optStr("authority", a.Authority)
	e.close()
}

// serviceBusMessage writes the members of m into the object being
// written (the queue and topic messages embed it).
func (e *encoder) serviceBusMessage(m *action.ServiceBusMessage) {
	e.str("namespace", m.Namespace)
	e.optStr("transportType", string(m.TransportType))
	if a := m.Authentication; a != nil {
		e.key("authentication")
		e.open()
		e.optStr("sasKeyName", a.SASKeyName)
		e.optStr("sasKey", a.SASKey)
		e.optStr("type", a.Type)
		e.close()
	}
	e.str("message", m.Message)
	if p := m.BrokeredMessageProperties; p != nil {
		e.key("brokeredMessageProperties")
		e.open()
		e.optStr("contentType", p.ContentType)
		e.optStr("correlationId", p.CorrelationID)
		if p.ForcePersistence {
			e.key("forcePersistence")
			e.b = append(e.b, "true"...)
		}
		e.optStr("label", p.Label)
		e.optStr("messageId", p.MessageID)
		e.optStr("partitionKey", p.PartitionKey)
		e.optStr("replyTo", p.ReplyTo)
		e.optStr("replyToSessionId", p.ReplyToSessionID)
		e.optTime("scheduledEnqueueTimeUtc", p.ScheduledEnqueueTimeUtc)
		e.optStr("sessionId", p.SessionID)
		if p.TimeToLive != nil {
			e.key("timeToLive")
			e.b = appendString(e.b, p.TimeToLive.String())
		}
		e.optStr("to", p.To)
		e.optStr("viaPartitionKey", p.ViaPartitionKey)
		e.close()
	}
	e.optMap("customMessageProperties", m.CustomMessageProperties)
}

func (e *encoder) recurrence(r *recurrence.Recurrence) {
	e.open()
	e.optStr("cron", r.Cron)
	e.str("frequency", string(r.Frequency))
	e.optInt("interval", r.Interval)
	e.optInt("count", r.Count)
	e.optTime("endTime", r.EndTime)
	e.optStr("timeZone", r.TimeZone)
	if s := r.Schedule; s != nil {
		e.key("schedule")
		e.open()
		e.optInts("minutes", s.Minutes)
		e.optInts("hours", s.Hours)
		if len(s.WeekDays) > 0 {
			e.key("weekDays")
			e.b = append(e.b, '[')
			for i, d := range s.WeekDays {
				if i > 0 {
					e.b = append(e.b, ',')
				}
				e.b = appendString(e.b, string(d))
			}
			e.b = append(e.b, ']')
		}
		e.optInts("monthDays", s.MonthDays)
		if len(s.MonthlyOccurrences) > 0 {
			e.key("monthlyOccurrences")
			e.b = append(e.b, '[')
			for i, o := range s.MonthlyOccurrences {
				if i > 0 {
					e.b = append(e.b, ',')
				}
				e.open()
				e.str("day", string(o.Day))
				e.optInt("occurrence", o.Occurrence)
				e.close()
			}
			e.b = append(e.b, ']')
		}
		e.optInts("months", s.Months)
		e.close()
	}
	e.close()
}

const hexDigits = "0123456789abcdef"

const (
	ones8  = 0x0101010101010101
	highs8 = 0x8080808080808080
)

// special8 is 0 when none of the eight bytes of w is one appendString
// writes other than as is: a quote, a backslash, a control character or a
// byte of a multi-byte character. Otherwise the high bit of the first such
// byte is set, perhaps with others.
func special8(w uint64) uint64 {
	zero := func(v uint64) uint64 { return (v - ones8) &^ v & highs8 } // a zero byte
	return zero(w^(ones8*'"')) | zero(w^(ones8*'\\')) | (w-ones8*0x20)&^w&highs8 | w&highs8
}

// appendString appends s as a JSON string the way encoding/json writes it
// without HTML escaping: quotes, backslashes and control characters
// escaped, invalid UTF-8 replaced by U+FFFD, and U+2028 and U+2029
// escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendStringContent(b, s)
	return append(b, '"')
}

// appendStringContent is appendString without the quotes.
func appendStringContent(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		// Pass over eight plain bytes at a time.
		for i+8 <= len(s) {
			t := s[i : i+8]
			w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
				uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
			if special8(w) != 0 {
				break
			}
			i += 8
		}
		if i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}
