// Package sqlstore holds what the SQL store backends share: the mapping
// between the scheduler's records and table rows, the time encoding of
// indexed columns, and the loading of embedded schema migrations.
package sqlstore

import (
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/jobclock/scheduler/internal/codec"

	scheduler "github.com/jobclock/scheduler"
)

// Nanos returns t as Unix nanoseconds for an indexed column, or nil for the
// zero Time. Instants outside the int64 range (before 1678 or after 2262)
// are clamped to its ends, which keeps their order relative to any instant
// a scheduler can meet.
func Nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return NanosInt(t)
}

// NanosInt is like Nanos but returns the number itself, 0 for the zero
// Time.
func NanosInt(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	const minSec, maxSec = math.MinInt64/1_000_000_000 + 1, math.MaxInt64/1_000_000_000 - 1
	switch s := t.Unix(); {
	case s < minSec:
		return math.MinInt64
	case s > maxSec:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// Time returns the UTC instant of Unix nanoseconds n; ok false (NULL)
// gives the zero Time.
func Time(n int64, ok bool) time.Time {
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// UTC returns t in UTC without its monotonic reading; the zero Time stays
// zero.
func UTC(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC()
}

// utcIn sets *t in UTC, when t is not nil.
func utcIn(t *time.Time) {
	if t != nil {
		*t = UTC(*t)
	}
}

// JobRow is a job record in column form. JSON columns hold the definition,
// the status and the scheduling state; times are Unix nanoseconds, with
// Null* false for the zero Time.
type JobRow struct {
	Collection, Name string
	Definition       string // the Job as JSON; "null" for a nil Job, "" when not encoded (EncodeJobState)
	State            string
	Status           string // JobStatus as JSON
	Schedule         string // JobSchedule as JSON
	ETag             string
	Version          int64
	Created, Updated int64
	HasCreated       bool
	HasUpdated       bool
	DueAt            int64 // indexed copy of Schedule.DueAt, clamped
	HasDue           bool
	LeaseOwner       string
	LeaseUntil       int64
	HasLease         bool   // LeaseUntil is set
	Tags             string // the Tags as a JSON object; "" (NULL) for none
	Incarnation      int64  // 0 in rows of schemas before the store drew one
}

// TagsArg returns the tags value to bind: the JSON text, or nil for NULL.
func (r *JobRow) TagsArg() any {
	if r.Tags == "" {
		return nil
	}
	return r.Tags
}

// DefinitionArg returns the definition value to bind: the JSON text, or
// nil (NULL) for a row without its definition (see EncodeJobState).
func (r *JobRow) DefinitionArg() any {
	if r.Definition == "" {
		return nil
	}
	return r.Definition
}

// CreatedArg returns the created_at value to bind: the number, or nil for
// NULL.
func (r *JobRow) CreatedArg() any { return arg(r.Created, r.HasCreated) }

// UpdatedArg returns the updated_at value to bind.
func (r *JobRow) UpdatedArg() any { return arg(r.Updated, r.HasUpdated) }

// DueArg returns the due_at value to bind.
func (r *JobRow) DueArg() any { return arg(r.DueAt, r.HasDue) }

// LeaseUntilArg returns the lease_until value to bind.
func (r *JobRow) LeaseUntilArg() any { return arg(r.LeaseUntil, r.HasLease) }

func arg(n int64, ok bool) any {
	if !ok {
		return nil
	}
	return n
}

// NormJob returns a deep copy of j with every time in UTC, as stores
// return it.
func NormJob(j *scheduler.JobRecord) *scheduler.JobRecord {
	r := j.Clone()
	normJob(r)
	return r
}

// normJob sets every time of r, which nothing else holds (its status's
// times included: a Clone or a record just decoded), in UTC.
func normJob(r *scheduler.JobRecord) {
	r.Created, r.Updated, r.LeaseUntil = UTC(r.Created), UTC(r.Updated), UTC(r.LeaseUntil)
	utcIn(r.Status.LastExecutionTime)
	utcIn(r.Status.NextExecutionTime)
	s := &r.Schedule
	s.DueAt, s.Anchor, s.NextOccurrence, s.RunRequested = UTC(s.DueAt), UTC(s.Anchor), UTC(s.NextOccurrence), UTC(s.RunRequested)
	for _, o := range []*scheduler.Occurrence{s.Current, s.Waiting} {
		if o != nil {
			o.Expected, o.At = UTC(o.Expected), UTC(o.At)
			if o.Limited != nil {
				o.Limited.Since = UTC(o.Limited.Since)
			}
		}
	}
	if p := s.Policy; p != nil {
		p.Resumed = UTC(p.Resumed)
		for i := range p.Running {
			o := &p.Running[i]
			o.Expected, o.At, o.Until = UTC(o.Expected), UTC(o.At), UTC(o.Until)
		}
	}
}

// jsonBufs holds the buffers the JSON of a row is written into before it
// is copied into the row's strings, so that encoding a row allocates its
// strings and little else.
var jsonBufs = sync.Pool{New: func() any { return new([]byte) }}

// putBuf gives a buffer back to jsonBufs, unless a large value made it
// too large to keep.
func putBuf(bp *[]byte) {
	if cap(*bp) <= 64<<10 {
		jsonBufs.Put(bp)
	}
}

// EncodeJob returns the row of j, with its times normalised to UTC.
func EncodeJob(j *scheduler.JobRecord) (*JobRow, error) {
	return EncodeJobShared(j, nil)
}

// EncodeJobShared is EncodeJob for one of several records written
// together (a batch): the definition of a record that shares its
// definition with one encoded before (the same *Job, as the records of
// one answer of DecodeJobShared may) is not encoded again; defs, when not
// nil, gains the definitions encoded. A definition does not change while
// it is being written.
func EncodeJobShared(j *scheduler.JobRecord, defs map[*scheduler.Job]string) (*JobRow, error) {
	def, err := encodeDefinition(j, defs)
	if err != nil {
		return nil, err
	}
	row, err := EncodeJobState(j)
	if err != nil {
		return nil, err
	}
	row.Definition = def
	return row, nil
}

// encodeDefinition returns the JSON of j's definition, from defs when it
// holds it (see EncodeJobShared), which gains it otherwise.
func encodeDefinition(j *scheduler.JobRecord, defs map[*scheduler.Job]string) (string, error) {
	if def, ok := defs[j.Job]; ok && j.Job != nil {
		return def, nil
	}
	b, err := codec.Marshal(j.Job)
	if err != nil {
		return "", fmt.Errorf("encode definition of job %q: %w", j.ID(), err)
	}
	def := string(b)
	if defs != nil && j.Job != nil {
		defs[j.Job] = def
	}
	return def, nil
}

// EncodeRecord returns the row that a record of j writes: with
// keepDefinition (see [scheduler.RecordRequest.KeepDefinition]) the row
// of EncodeJobState, which leaves the stored definition as it is;
// otherwise that of EncodeJobShared with defs.
func EncodeRecord(j *scheduler.JobRecord, keepDefinition bool, defs map[*scheduler.Job]string) (*JobRow, error) {
	if keepDefinition {
		return EncodeJobState(j)
	}
	return EncodeJobShared(j, defs)
}

// EncodeJobState is EncodeJob without the definition, which it neither
// reads nor encodes: the row's Definition is empty, and DefinitionArg
// binds NULL (the SQL of a record then keeps the stored definition).
func EncodeJobState(j *scheduler.JobRecord) (*JobRow, error) {
	// Both JSON values, their times in UTC, in one buffer, then in one
	// string.
	bp := jsonBufs.Get().(*[]byte)
	defer putBuf(bp)
	b, n, err := appendState((*bp)[:0], j)
	*bp = b
	if err != nil {
		return nil, err
	}
	texts := string(b)
	row := &JobRow{}
	stateRow(row, j, texts[:n], texts[n:])
	if len(j.Tags) > 0 {
		b, err := codec.Marshal(j.Tags)
		if err != nil {
			return nil, fmt.Errorf("encode tags of job %q: %w", j.ID(), err)
		}
		row.Tags = string(b)
	}
	return row, nil
}

// The counts of a job's status, which its stored JSON leaves out when
// they are zero (a missing count reads back as zero): most jobs have not
// failed, and a job not run yet has no count but zero.
var (
	statusExecutions = codec.MembersOf[scheduler.JobStatus]("executionCount")
	statusFailures   = codec.MembersOf[scheduler.JobStatus]("failureCount")
	statusFaults     = codec.MembersOf[scheduler.JobStatus]("faultedCount")
)

// zeroCounts returns the counts of s that are zero.
func zeroCounts(s *scheduler.JobStatus) codec.Members {
	var m codec.Members
	if s.ExecutionCount == 0 {
		m = m.Add(statusExecutions)
	}
	if s.FailureCount == 0 {
		m = m.Add(statusFailures)
	}
	if s.FaultedCount == 0 {
		m = m.Add(statusFaults)
	}
	return m
}

// appendState appends the JSON of j's status, without its zero counts,
// and then of its schedule, their times in UTC, to b, and returns b and
// where the schedule begins.
func appendState(b []byte, j *scheduler.JobRecord) ([]byte, int, error) {
	b, err := codec.AppendUTCWithout(b, &j.Status, true, zeroCounts(&j.Status))
	if err != nil {
		return b, 0, fmt.Errorf("encode status of job %q: %w", j.ID(), err)
	}
	n := len(b)
	b, err = codec.AppendUTC(b, &j.Schedule, true)
	if err != nil {
		return b, 0, fmt.Errorf("encode schedule of job %q: %w", j.ID(), err)
	}
	return b, n, nil
}

// stateRow sets row to the row of j without its definition and tags,
// with status and schedule as the JSON texts of j's.
func stateRow(row *JobRow, j *scheduler.JobRecord, status, schedule string) {
	// The times below are the same instants in any location.
	*row = JobRow{
		Collection: j.Collection, Name: j.Name, State: string(j.State),
		Status: status, Schedule: schedule, ETag: j.ETag, Version: j.Version,
		Created: NanosInt(j.Created), HasCreated: !j.Created.IsZero(),
		Updated: NanosInt(j.Updated), HasUpdated: !j.Updated.IsZero(),
		DueAt: NanosInt(j.Schedule.DueAt), HasDue: !j.Schedule.DueAt.IsZero(),
		LeaseOwner: j.LeaseOwner, Incarnation: j.Incarnation,
		LeaseUntil: NanosInt(j.LeaseUntil), HasLease: !j.LeaseUntil.IsZero(),
	}
}

// Texts holds the JSON texts of the rows of one statement (a batch of
// records) in one buffer, which it keeps from statement to statement:
// the strings of the rows it encodes are views of its bytes, not copies,
// so that encoding a row allocates nothing once the buffer has grown to
// a statement's size. They stay valid until the next Reset, which lets
// the next statement's texts overwrite them. The driver, and a tracer of
// the host's pool, may keep the arguments of a statement: a caller hands
// them over in a value that plainly changes (a column of the batch, by
// pointer) or as a clone, never as a plain string over t's bytes. The
// zero value is ready to use.
type Texts struct{ b []byte }

// Reset empties t for the next statement. Nothing may use the strings of
// the rows it encoded before.
func (t *Texts) Reset() { t.b = t.b[:0] }

// Cap returns the size of t's buffer.
func (t *Texts) Cap() int { return cap(t.b) }

// view returns b[from:to] as a string over the same bytes. A later
// append that moves t's buffer leaves them where they are.
func view(b []byte, from, to int) string {
	if from == to {
		return ""
	}
	return unsafe.String(&b[from], to-from)
}

// EncodeRecord sets row to the row that a record of j writes, as
// [EncodeRecord] returns it, but with its status and schedule in t, and
// without the tags, which a record does not write.
func (t *Texts) EncodeRecord(row *JobRow, j *scheduler.JobRecord, keepDefinition bool, defs map[*scheduler.Job]string) error {
	def := ""
	if !keepDefinition {
		var err error
		if def, err = encodeDefinition(j, defs); err != nil {
			return err
		}
	}
	start := len(t.b)
	b, n, err := appendState(t.b, j)
	if err != nil {
		t.b = b[:start]
		return err
	}
	t.b = b
	stateRow(row, j, view(b, start, n), view(b, n, len(b)))
	row.Definition = def
	return nil
}

// bytesOf returns the bytes of s itself, not a copy, for codec.Unmarshal,
// which only reads them (and the UnmarshalJSON methods of the record's
// types, which only read theirs) and keeps nothing of them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// DecodeJob returns the record of a row.
func DecodeJob(row *JobRow) (*scheduler.JobRecord, error) {
	return DecodeJobShared(row, nil)
}

// Definitions holds the definitions decoded from the rows of one answer
// (a claim) by their JSON text, for DecodeJobShared. It copies the texts
// into a [keptBytes] of its own: a row's text may be its scanner's,
// reused for the next row. The zero value is ready to use; it allocates
// nothing until a definition is added.
type Definitions struct {
	m    map[string]*scheduler.Job
	text keptBytes
}

// Reset empties d for the rows of another answer, keeping its room: the
// records decoded before keep their definitions, which hold nothing of
// d's texts.
func (d *Definitions) Reset() {
	clear(d.m)
	d.text.b = d.text.b[:0]
}

// Len returns the number of definitions d holds.
func (d *Definitions) Len() int { return len(d.m) }

// add adds the definition j of JSON text.
func (d *Definitions) add(text string, j *scheduler.Job) {
	if d.m == nil {
		d.m = map[string]*scheduler.Job{}
	}
	d.m[keep(&d.text, text)] = j
}

// DecodeJobShared is DecodeJob for one of several rows read together
// (a claim): a definition whose text defs holds is not decoded again, so
// the records of one answer may share a definition (they are all the
// caller's; the store keeps nothing of them); defs, when not nil, gains
// the definitions decoded.
func DecodeJobShared(row *JobRow, defs *Definitions) (*scheduler.JobRecord, error) {
	r := &scheduler.JobRecord{
		Collection: row.Collection, Name: row.Name, State: scheduler.JobState(row.State), ETag: row.ETag,
		Version: row.Version, Created: Time(row.Created, row.HasCreated), Updated: Time(row.Updated, row.HasUpdated),
		LeaseOwner: row.LeaseOwner, LeaseUntil: Time(row.LeaseUntil, row.HasLease), Incarnation: row.Incarnation,
	}
	if row.Definition != "null" {
		if defs != nil {
			r.Job = defs.m[row.Definition]
		}
		if r.Job == nil {
			r.Job = new(scheduler.Job)
			if err := codec.Unmarshal(bytesOf(row.Definition), r.Job); err != nil {
				return nil, fmt.Errorf("decode definition of job %q: %w", r.ID(), err)
			}
			if defs != nil {
				defs.add(row.Definition, r.Job)
			}
		}
	}
	if err := codec.Unmarshal(bytesOf(row.Status), &r.Status); err != nil {
		return nil, fmt.Errorf("decode status of job %q: %w", r.ID(), err)
	}
	if err := codec.Unmarshal(bytesOf(row.Schedule), &r.Schedule); err != nil {
		return nil, fmt.Errorf("decode schedule of job %q: %w", r.ID(), err)
	}
	if row.Tags != "" {
		if err := codec.Unmarshal(bytesOf(row.Tags), &r.Tags); err != nil {
			return nil, fmt.Errorf("decode tags of job %q: %w", r.ID(), err)
		}
		if len(r.Tags) == 0 {
			r.Tags = nil
		}
	}
	normJob(r)
	return r, nil
}

// CollectionRow is a collection record in column form.
type CollectionRow struct {
	Name             string
	Definition       string // JobCollection as JSON
	Enabled          bool   // the collection's state is Enabled
	ETag             string
	Version          int64
	Created, Updated int64
	HasCreated       bool
	HasUpdated       bool
}

// CreatedArg returns the created_at value to bind: the number, or nil for
// NULL.
func (r *CollectionRow) CreatedArg() any { return arg(r.Created, r.HasCreated) }

// UpdatedArg returns the updated_at value to bind.
func (r *CollectionRow) UpdatedArg() any { return arg(r.Updated, r.HasUpdated) }

// EncodeCollection returns the row of c.
func EncodeCollection(c *scheduler.CollectionRecord) (*CollectionRow, error) {
	def, err := codec.Marshal(c.Definition)
	if err != nil {
		return nil, fmt.Errorf("encode job collection %q: %w", c.Name, err)
	}
	created, updated := UTC(c.Created), UTC(c.Updated)
	return &CollectionRow{
		Name: c.Name, Definition: string(def), Enabled: c.Definition.State() == scheduler.CollectionEnabled,
		ETag: c.ETag, Version: c.Version,
		Created: NanosInt(created), HasCreated: !created.IsZero(),
		Updated: NanosInt(updated), HasUpdated: !updated.IsZero(),
	}, nil
}

// DecodeCollection returns the record of a row.
func DecodeCollection(row *CollectionRow) (*scheduler.CollectionRecord, error) {
	c := &scheduler.CollectionRecord{
		Name: row.Name, ETag: row.ETag, Version: row.Version,
		Created: Time(row.Created, row.HasCreated), Updated: Time(row.Updated, row.HasUpdated),
	}
	if err := codec.Unmarshal([]byte(row.Definition), &c.Definition); err != nil {
		return nil, fmt.Errorf("decode job collection %q: %w", row.Name, err)
	}
	return c, nil
}

// HistoryRow is a history entry in column form: the entry as JSON, with
// its job's collection and name, status and end time (and, in a table
// with the action columns, its action name and retry count) as columns.
type HistoryRow struct {
	Collection, Job string // of the job whose history holds the entry
	Status          string
	End             int64 // Unix nanoseconds of the end time, clamped
	HasEnd          bool  // the entry has an end time (End is NULL otherwise)
	ActionName      string
	RetryCount      int32
	Entry           string
}

// EndArg returns the end_time value to bind: the number, or nil for NULL.
func (r *HistoryRow) EndArg() any { return arg(r.End, r.HasEnd) }

// HistoryColumns says which members of a history entry a backend's
// history table holds in columns of their own: its job's collection and
// name, its status and its end time always, its action name and retry
// count with Action. The entry's JSON leaves out what the columns hold,
// and DecodeHistory takes it from them; a member that a column cannot
// give back as it is stays in the JSON: an entry of another job's names,
// a status not in its canonical spelling, a zero end time or one outside
// the years 1678 to 2262 that the column's nanoseconds hold, a retry
// count beyond an integer column. Rows whose JSON holds every member, as
// stores wrote them before, read back the same: the JSON's members count.
type HistoryColumns struct {
	Action bool // the action_name and retry_count columns
}

// The members of a history entry's JSON that columns may hold.
var (
	historyCollection = codec.MembersOf[scheduler.HistoryEntry]("collection")
	historyJob        = codec.MembersOf[scheduler.HistoryEntry]("job")
	historyStatus     = codec.MembersOf[scheduler.HistoryEntry]("status")
	historyEnd        = codec.MembersOf[scheduler.HistoryEntry]("endTime")
	historyAction     = codec.MembersOf[scheduler.HistoryEntry]("actionName")
	historyRetry      = codec.MembersOf[scheduler.HistoryEntry]("retryCount")
)

// leave returns the members of h's JSON that c's columns hold, for an
// entry of job collection/job.
func (c HistoryColumns) leave(h *scheduler.HistoryEntry, collection, job string) codec.Members {
	var m codec.Members
	if h.Collection == collection {
		m = m.Add(historyCollection)
	}
	if h.Job == job {
		m = m.Add(historyJob)
	}
	if h.Status.Valid() {
		m = m.Add(historyStatus)
	}
	if e := h.EndTime; !e.IsZero() && Time(NanosInt(e), true).Equal(e) {
		m = m.Add(historyEnd)
	}
	if c.Action {
		m = m.Add(historyAction)
		if int(int32(h.RetryCount)) == h.RetryCount {
			m = m.Add(historyRetry)
		}
	}
	return m
}

// EncodeHistory returns the row of h, an entry of job collection/job,
// with its times in UTC. It only reads h.
func (c HistoryColumns) EncodeHistory(h *scheduler.HistoryEntry, collection, job string) (*HistoryRow, error) {
	bp := jsonBufs.Get().(*[]byte)
	defer putBuf(bp)
	b, err := c.appendHistory((*bp)[:0], h, collection, job)
	*bp = b
	if err != nil {
		return nil, err
	}
	r := historyRow(h, collection, job, string(b))
	return &r, nil
}

// EncodeHistory returns the row of h, as [HistoryColumns.EncodeHistory]
// does, but with its entry in t.
func (t *Texts) EncodeHistory(c HistoryColumns, h *scheduler.HistoryEntry, collection, job string) (HistoryRow, error) {
	start := len(t.b)
	b, err := c.appendHistory(t.b, h, collection, job)
	if err != nil {
		t.b = b[:start]
		return HistoryRow{}, err
	}
	t.b = b
	return historyRow(h, collection, job, view(b, start, len(b))), nil
}

// appendHistory appends the JSON of h, an entry of job collection/job,
// without what c's columns hold, its times in UTC, to b.
func (c HistoryColumns) appendHistory(b []byte, h *scheduler.HistoryEntry, collection, job string) ([]byte, error) {
	b, err := codec.AppendUTCWithout(b, h, true, c.leave(h, collection, job))
	if err != nil {
		return b, fmt.Errorf("encode history entry of job %s/%s: %w", collection, job, err)
	}
	return b, nil
}

// historyRow returns the row of h, an entry of job collection/job, whose
// entry is the JSON text entry.
func historyRow(h *scheduler.HistoryEntry, collection, job, entry string) HistoryRow {
	return HistoryRow{Collection: collection, Job: job, Status: string(h.Status), End: NanosInt(h.EndTime), HasEnd: !h.EndTime.IsZero(),
		ActionName: string(h.ActionName), RetryCount: int32(h.RetryCount), Entry: entry}
}

// DecodeHistory returns the entry of a row: its JSON, with the members it
// leaves out from the row's columns (those of c).
func (c HistoryColumns) DecodeHistory(row *HistoryRow) (scheduler.HistoryEntry, error) {
	h := scheduler.HistoryEntry{Collection: row.Collection, Job: row.Job, Status: scheduler.ExecutionStatus(row.Status),
		EndTime: Time(row.End, row.HasEnd)}
	if c.Action {
		h.ActionName, h.RetryCount = scheduler.ActionName(row.ActionName), int(row.RetryCount)
	}
	// The members the JSON holds replace those of the columns.
	if err := codec.Unmarshal(bytesOf(row.Entry), &h); err != nil {
		return h, fmt.Errorf("decode history entry: %w", err)
	}
	return NormHistory(h), nil
}

// NormHistory returns h with its times in UTC.
func NormHistory(h scheduler.HistoryEntry) scheduler.HistoryEntry {
	h.ExpectedExecutionTime, h.StartTime, h.EndTime = UTC(h.ExpectedExecutionTime), UTC(h.StartTime), UTC(h.EndTime)
	return h
}

// QuotaError returns the error of a create in a full collection.
func QuotaError(collection string, limit, count int) error {
	return &scheduler.QuotaError{Collection: collection, Quota: "maxJobCount", Limit: fmt.Sprint(limit),
		Reason: fmt.Sprintf("the collection already holds %d jobs", count)}
}

// QuotaReplaceError returns the error of a collection replace whose quota
// is below its job count.
func QuotaReplaceError(collection string, limit, count int) error {
	return &scheduler.QuotaError{Collection: collection, Quota: "maxJobCount", Limit: fmt.Sprint(limit),
		Reason: fmt.Sprintf("the collection holds %d jobs", count)}
}
