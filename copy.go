package scheduler

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// copyDefinition returns the deep copy of j without its Status that
// encoding it to JSON and decoding the result into a new Job gives (the
// form a definition is stored in: only its JSON members, empty members
// left out as their tags say, times without monotonic readings and with
// the zone JSON keeps, raw JSON compacted), without encoding it. ok is
// false when the copy must be made through JSON after all: j holds a value
// whose encoding this does not mirror (invalid UTF-8, a time outside years
// 0-9999), or its JSON without Status may be longer than MaxJobSize. The
// copy shares nothing that can change with j.
//
// It is written out member by member, which is several times faster than
// walking the types by reflection; TestCopyDefinitionEveryField fails when
// a member added to a definition type is not copied here.
func copyDefinition(j *Job) (cp *Job, ok bool) {
	c := &copier{size: overhead.job}
	// (The job and its start time in one allocation would keep 8 bytes
	// more per job: 176 instead of 144 and 24.)
	cp = new(Job)
	cp.StartTime = c.timePtr(j.StartTime)
	cp.State = JobState(c.str(string(j.State)))
	if !c.action(&cp.Action, &j.Action, 0) {
		return nil, false
	}
	if r := j.Recurrence; r != nil {
		cp.Recurrence = c.recurrence(r)
	}
	if c.refused || c.size > MaxJobSize {
		return nil, false
	}
	return cp, true
}

// copyThroughJSON is copyDefinition by encoding j and decoding the result.
// It reports a definition whose JSON is longer than MaxJobSize.
func copyThroughJSON(j *Job) (*Job, error) {
	data, err := json.Marshal(j)
	if err != nil {
		return nil, &ValidationError{Path: "job", Reason: "cannot be encoded: " + err.Error()}
	}
	if len(data) > MaxJobSize {
		return nil, &ValidationError{Path: "job", Reason: fmt.Sprintf("is %d bytes, more than the limit of %d", len(data), MaxJobSize)}
	}
	cp := new(Job)
	if err := json.Unmarshal(data, cp); err != nil {
		return nil, &ValidationError{Path: "job", Reason: "cannot be decoded: " + err.Error()}
	}
	return cp, nil
}

// copier copies definition values as a JSON round trip would. size bounds
// from above the length of the JSON encoding of what it copied; ok turns
// false when a value cannot be copied without JSON.
type copier struct {
	size    int
	refused bool
}

// maxErrorActionDepth bounds the chain of error actions copied without
// JSON; validation allows one.
const maxErrorActionDepth = 4

// Bounds of the JSON a member adds besides its value: its name, quotes, a
// colon and a comma.
const (
	numberSize   = len("-9223372036854775808")
	durationSize = 64
	timeSize     = len(`"2006-01-02T15:04:05.999999999-07:00"`)
)

// overhead is, for each definition type, the length of the JSON a value
// of it takes besides its members' values: braces, and every member's
// name with its quotes, colon and comma, present or not.
var overhead = struct {
	job, action, request, auth, queue, sbQueue, sbTopic, sbAuth, brokered,
	policy, recurrence, schedule, monthly int
}{
	job:        structOverhead(reflect.TypeFor[Job]()),
	action:     structOverhead(reflect.TypeFor[action.Action]()),
	request:    structOverhead(reflect.TypeFor[action.HTTPRequest]()),
	auth:       structOverhead(reflect.TypeFor[action.Authentication]()),
	queue:      structOverhead(reflect.TypeFor[action.StorageQueueMessage]()),
	sbQueue:    structOverhead(reflect.TypeFor[action.ServiceBusQueueMessage]()),
	sbTopic:    structOverhead(reflect.TypeFor[action.ServiceBusTopicMessage]()),
	sbAuth:     structOverhead(reflect.TypeFor[action.ServiceBusAuthentication]()),
	brokered:   structOverhead(reflect.TypeFor[action.BrokeredMessageProperties]()),
	policy:     structOverhead(reflect.TypeFor[retry.Policy]()),
	recurrence: structOverhead(reflect.TypeFor[recurrence.Recurrence]()),
	schedule:   structOverhead(reflect.TypeFor[recurrence.Schedule]()),
	monthly:    structOverhead(reflect.TypeFor[recurrence.MonthlyOccurrence]()),
}

// structOverhead returns the length of t's JSON object besides its
// members' values, embedded structs' members included.
func structOverhead(t reflect.Type) int {
	n := len("{}")
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		n += len(name) + len(`"":,`)
	}
	return n
}

// str returns s, adding its encoded length, at most, to c.size; it
// refuses s when it is not valid UTF-8, which encoding replaces.
func (c *copier) str(s string) string {
	if s == "" {
		c.size += len(`""`)
		return ""
	}
	if !utf8.ValidString(s) {
		c.refused = true
		return ""
	}
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20, b == '"', b == '\\', b == '<', b == '>', b == '&':
			n += 5 // \u00XX at most
		case b == 0xE2:
			n += 3 // U+2028 and U+2029 become \u2028 and \u2029
		}
	}
	c.size += n
	return s
}

// time returns tm as JSON decodes its encoding: false for a year outside
// 0-9999, which encoding refuses.
func (c *copier) time(tm time.Time) (time.Time, bool) {
	if y := tm.Year(); y < 0 || y > 9999 {
		return time.Time{}, false
	}
	c.size += timeSize
	if _, off := tm.Zone(); off == 0 {
		// Encoded with "Z", decoded in UTC.
		return tm.Round(0).UTC(), true
	}
	tm, err := time.Parse(time.RFC3339Nano, tm.Format(time.RFC3339Nano))
	return tm, err == nil
}

// timePtr copies *p into a new time; nil stays nil.
func (c *copier) timePtr(p *time.Time) *time.Time {
	if p == nil {
		return nil
	}
	tm, ok := c.time(*p)
	if !ok {
		c.refused = true
		return nil
	}
	return &tm
}

// raw copies a raw JSON member that omitempty leaves out when empty.
func (c *copier) raw(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if compactJSON(b) {
		b = append(json.RawMessage(nil), b...)
	} else {
		var err error
		if b, err = json.Marshal(b); err != nil {
			c.refused = true
			return nil
		}
	}
	c.size += len(b)
	return b
}

// stringMap copies a map member that omitempty leaves out when empty.
func (c *copier) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	c.size += len("{}")
	cp := make(map[string]string, len(m))
	for k, v := range m {
		cp[c.str(k)] = c.str(v)
		c.size += len(":,")
	}
	return cp
}

// ints copies a slice member that omitempty leaves out when empty.
func (c *copier) ints(s []int) []int {
	if len(s) == 0 {
		return nil
	}
	c.size += len("[]") + len(s)*(numberSize+1)
	return append([]int(nil), s...)
}

func (c *copier) action(dst, src *action.Action, depth int) bool {
	c.size += overhead.action
	dst.Type = action.Type(c.str(string(src.Type)))
	if r := src.Request; r != nil {
		c.size += overhead.request
		cp := &action.HTTPRequest{URI: c.str(r.URI), Method: c.str(r.Method), Headers: c.stringMap(r.Headers), Body: c.str(r.Body)}
		if a := r.Authentication; a != nil {
			c.size += overhead.auth
			cp.Authentication = &action.Authentication{
				Type: action.AuthType(c.str(string(a.Type))), Username: c.str(a.Username), Password: c.str(a.Password),
				Pfx: c.str(a.Pfx), CertificateThumbprint: c.str(a.CertificateThumbprint),
				CertificateSubjectName: c.str(a.CertificateSubjectName), CertificateExpirationDate: c.timePtr(a.CertificateExpirationDate),
				Tenant: c.str(a.Tenant), Audience: c.str(a.Audience), ClientID: c.str(a.ClientID), Secret: c.str(a.Secret),
				Authority: c.str(a.Authority),
			}
		}
		dst.Request = cp
	}
	if q := src.QueueMessage; q != nil {
		c.size += overhead.queue
		dst.QueueMessage = &action.StorageQueueMessage{StorageAccount: c.str(q.StorageAccount), QueueName: c.str(q.QueueName),
			SASToken: c.str(q.SASToken), Message: c.str(q.Message)}
	}
	if q := src.ServiceBusQueueMessage; q != nil {
		c.size += overhead.sbQueue
		dst.ServiceBusQueueMessage = &action.ServiceBusQueueMessage{ServiceBusMessage: c.sbMessage(&q.ServiceBusMessage), QueueName: c.str(q.QueueName)}
	}
	if t := src.ServiceBusTopicMessage; t != nil {
		c.size += overhead.sbTopic
		dst.ServiceBusTopicMessage = &action.ServiceBusTopicMessage{ServiceBusMessage: c.sbMessage(&t.ServiceBusMessage), TopicPath: c.str(t.TopicPath)}
	}
	dst.Custom = c.raw(src.Custom)
	if p := src.RetryPolicy; p != nil {
		c.size += overhead.policy + 3*durationSize + numberSize
		cp := &retry.Policy{Type: retry.Type(c.str(string(p.Type))), Interval: p.Interval,
			MinimumInterval: p.MinimumInterval, MaximumInterval: p.MaximumInterval}
		if p.Count != nil {
			cp.Count = new(*p.Count)
		}
		dst.RetryPolicy = cp
	}
	if c.refused {
		return false
	}
	if ea := src.ErrorAction; ea != nil {
		if depth >= maxErrorActionDepth {
			return false
		}
		dst.ErrorAction = new(action.Action)
		return c.action(dst.ErrorAction, ea, depth+1)
	}
	return true
}

func (c *copier) sbMessage(m *action.ServiceBusMessage) action.ServiceBusMessage {
	cp := action.ServiceBusMessage{Namespace: c.str(m.Namespace), TransportType: action.TransportType(c.str(string(m.TransportType))),
		Message: c.str(m.Message), CustomMessageProperties: c.stringMap(m.CustomMessageProperties)}
	if a := m.Authentication; a != nil {
		c.size += overhead.sbAuth
		cp.Authentication = &action.ServiceBusAuthentication{SASKeyName: c.str(a.SASKeyName), SASKey: c.str(a.SASKey), Type: c.str(a.Type)}
	}
	if p := m.BrokeredMessageProperties; p != nil {
		c.size += overhead.brokered + len("false") + durationSize
		bp := &action.BrokeredMessageProperties{
			ContentType: c.str(p.ContentType), CorrelationID: c.str(p.CorrelationID), ForcePersistence: p.ForcePersistence,
			Label: c.str(p.Label), MessageID: c.str(p.MessageID), PartitionKey: c.str(p.PartitionKey), ReplyTo: c.str(p.ReplyTo),
			ReplyToSessionID: c.str(p.ReplyToSessionID), ScheduledEnqueueTimeUtc: c.timePtr(p.ScheduledEnqueueTimeUtc),
			SessionID: c.str(p.SessionID), To: c.str(p.To), ViaPartitionKey: c.str(p.ViaPartitionKey),
		}
		if p.TimeToLive != nil {
			bp.TimeToLive = new(*p.TimeToLive)
		}
		cp.BrokeredMessageProperties = bp
	}
	return cp
}

func (c *copier) recurrence(r *recurrence.Recurrence) *recurrence.Recurrence {
	c.size += overhead.recurrence + 2*numberSize
	cp := &recurrence.Recurrence{Cron: c.str(r.Cron), Frequency: recurrence.Frequency(c.str(string(r.Frequency))),
		Interval: r.Interval, Count: r.Count, EndTime: c.timePtr(r.EndTime), TimeZone: c.str(r.TimeZone)}
	if s := r.Schedule; s != nil {
		c.size += overhead.schedule
		sc := &recurrence.Schedule{Minutes: c.ints(s.Minutes), Hours: c.ints(s.Hours), MonthDays: c.ints(s.MonthDays), Months: c.ints(s.Months)}
		if len(s.WeekDays) > 0 {
			c.size += len("[]")
			sc.WeekDays = make([]recurrence.Weekday, len(s.WeekDays))
			for i, d := range s.WeekDays {
				sc.WeekDays[i] = recurrence.Weekday(c.str(string(d)))
				c.size++
			}
		}
		if len(s.MonthlyOccurrences) > 0 {
			c.size += len("[]")
			sc.MonthlyOccurrences = make([]recurrence.MonthlyOccurrence, len(s.MonthlyOccurrences))
			for i, o := range s.MonthlyOccurrences {
				sc.MonthlyOccurrences[i] = recurrence.MonthlyOccurrence{Day: recurrence.Weekday(c.str(string(o.Day))), Occurrence: o.Occurrence}
				c.size += overhead.monthly + numberSize + 1
			}
		}
		cp.Schedule = sc
	}
	return cp
}

// compactJSON reports whether b is valid JSON that encoding/json would
// write unchanged: no whitespace to drop, nothing to escape for HTML.
func compactJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n', '<', '>', '&', 0xE2:
			return false
		}
	}
	return json.Valid(b)
}
