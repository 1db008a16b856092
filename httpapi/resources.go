package httpapi

import (
	"crypto/sha256"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/internal/lru"
)

// The ARM resource types.
const (
	TypeJobCollection = "Microsoft.Scheduler/jobCollections"
	TypeJob           = "Microsoft.Scheduler/jobCollections/jobs"
	TypeJobHistory    = "Microsoft.Scheduler/jobCollections/jobs/history"
)

// JobCollectionDefinition is the ARM resource of a job collection, as
// returned by the API. Its properties show the effective plan, state and
// quota: a collection stored without a plan shows Standard, without a
// state Enabled, and without a quota the plan's limits.
type JobCollectionDefinition struct {
	ID         string                         `json:"id"`
	Type       string                         `json:"type"`
	Name       string                         `json:"name"`
	Location   string                         `json:"location,omitempty"`
	Tags       map[string]string              `json:"tags,omitempty"`
	Properties scheduler.CollectionProperties `json:"properties"`
	// ETag is the collection's entity tag, from the ETag response header
	// (it is not part of the body). Client methods fill it in.
	ETag string `json:"-"`
}

// JobDefinition is the ARM resource of a job. Properties is the job
// definition with its state and status; secrets (passwords, pfx, OAuth
// secrets, SAS tokens and keys) are always empty, and a client certificate
// is described by certificateThumbprint, certificateSubjectName and
// certificateExpirationDate instead.
type JobDefinition struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Name string `json:"name"`
	// Tags are the job's labels (scheduler.JobRecord.Tags); left out
	// when it has none.
	Tags       map[string]string `json:"tags,omitempty"`
	Properties *scheduler.Job    `json:"properties"`
	// ETag is the job's entity tag, from the ETag response header.
	// Client methods fill it in.
	ETag string `json:"-"`
}

// JobHistoryDefinition is the ARM resource of one job history entry. Its
// ID ends with "{A}:{B}", two 20-digit numbers chosen so that IDs sort in
// ascending order from the newest entry to the oldest: A counts down
// from the entry's start time (DateTime.MaxValue ticks minus the start
// time in .NET ticks, as the service did) and B from the occurrence, action
// and retry numbers.
type JobHistoryDefinition struct {
	ID         string                         `json:"id"`
	Type       string                         `json:"type"`
	Name       string                         `json:"name"`
	Properties JobHistoryDefinitionProperties `json:"properties"`
}

// JobHistoryDefinitionProperties are the properties of a history entry.
type JobHistoryDefinitionProperties struct {
	StartTime             time.Time                 `json:"startTime"`
	EndTime               time.Time                 `json:"endTime"`
	ExpectedExecutionTime time.Time                 `json:"expectedExecutionTime"`
	ActionName            scheduler.ActionName      `json:"actionName"`
	Status                scheduler.ExecutionStatus `json:"status"`
	Message               string                    `json:"message"`
	RetryCount            int                       `json:"retryCount"`
	RepeatCount           int                       `json:"repeatCount"`
	// The members below are extensions, which Azure clients ignore:
	// those of scheduler.HistoryEntry of the same names, each left out
	// of the JSON when empty (0, false, the zero time).
	//
	// ExecutionTag is the tag shared by the attempts of the occurrence
	// (the x-ms-scheduler-execution-tag the action was sent with).
	ExecutionTag string `json:"executionTag,omitempty"`
	// Faulted marks the failed last attempt of an occurrence's main
	// action, after which the occurrence is faulted (the job's
	// faultedCount counts it) and its errorAction, if any, runs.
	Faulted bool `json:"faulted,omitempty"`
	// Skipped counts the occurrences a Skipped entry stands for (from
	// expectedExecutionTime on, at most scheduler.MaxSkippedCounted),
	// and LastExpectedTime is the expected time of the last of them.
	Skipped          int       `json:"skipped,omitempty"`
	LastExpectedTime time.Time `json:"lastExpectedTime,omitzero"`
	// Backfill marks the entries of a backfilled occurrence, and Manual
	// those of a run asked for with POST .../jobs/{job}/run.
	Backfill bool `json:"backfill,omitempty"`
	Manual   bool `json:"manual,omitempty"`
	// LimitWaitMillis is, for an attempt that waited for the permits of
	// its collection's limits, how long its occurrence was held back, in
	// milliseconds.
	LimitWaitMillis int32 `json:"limitWaitMs,omitempty"`
	// HTTPStatus is the response status of an HTTP attempt that got an
	// answer other than 2xx.
	HTTPStatus int `json:"httpStatus,omitempty"`
}

// JobCollectionListResult is one page of job collections.
type JobCollectionListResult struct {
	Value []JobCollectionDefinition `json:"value"`
	// NextLink is the URL of the next page; nil, and left out of the JSON, on
	// the last page.
	NextLink *string `json:"nextLink,omitempty"`
}

// JobListResult is one page of jobs.
type JobListResult struct {
	Value []JobDefinition `json:"value"`
	// NextLink is the URL of the next page; nil, and left out of the JSON, on
	// the last page.
	NextLink *string `json:"nextLink,omitempty"`
}

// JobHistoryListResult is one page of job history.
type JobHistoryListResult struct {
	Value []JobHistoryDefinition `json:"value"`
	// NextLink is the URL of the next page; nil, and left out of the JSON, on
	// the last page.
	NextLink *string `json:"nextLink,omitempty"`
}

// scope identifies a job collection through the API.
type scope struct {
	sub, rg, jc string
}

// key is the collection name in the engine.
func (s scope) key() string { return s.sub + "/" + s.rg + "/" + s.jc }

func (s scope) collectionID() string {
	return "/subscriptions/" + s.sub + "/resourceGroups/" + s.rg + "/providers/Microsoft.Scheduler/jobCollections/" + s.jc
}

// jobID is collectionID() + "/jobs/" + job, built in one piece.
func (s scope) jobID(job string) string {
	return "/subscriptions/" + s.sub + "/resourceGroups/" + s.rg + "/providers/Microsoft.Scheduler/jobCollections/" + s.jc + "/jobs/" + job
}

// splitKey splits an engine collection name into its scope; ok is false
// for names that do not have two scope segments.
func splitKey(key string) (scope, bool) {
	var parts [3]string
	n := 0
	start := 0
	for i := 0; i <= len(key); i++ {
		if i == len(key) || key[i] == '/' {
			if n == 3 {
				return scope{}, false
			}
			parts[n] = key[start:i]
			n++
			start = i + 1
		}
	}
	if n != 3 {
		return scope{}, false
	}
	return scope{parts[0], parts[1], parts[2]}, true
}

// collectionResource builds the response body of a collection.
func collectionResource(sc scope, r *scheduler.CollectionRecord) JobCollectionDefinition {
	def := r.Definition
	mr := def.MaxRecurrence()
	quota := &scheduler.Quota{MaxJobCount: def.MaxJobCount(), MaxRecurrence: &mr}
	if def.Properties.Quota != nil {
		quota.MaxJobOccurrence = def.Properties.Quota.MaxJobOccurrence
	}
	var tags map[string]string
	if len(def.Tags) > 0 {
		tags = make(map[string]string, len(def.Tags))
		for k, v := range def.Tags {
			tags[k] = v
		}
	}
	return JobCollectionDefinition{
		ID:       sc.collectionID(),
		Type:     TypeJobCollection,
		Name:     sc.jc,
		Location: def.Location,
		Tags:     tags,
		Properties: scheduler.CollectionProperties{
			SKU:       &scheduler.SKU{Name: def.Plan()},
			State:     def.State(),
			Quota:     quota,
			RunPolicy: def.Properties.RunPolicy.Clone(),
			Limits:    slices.Clone(def.Properties.Limits),
		},
		ETag: r.ETag,
	}
}

// jobResource builds the response body of a job, without secrets.
func (h *handler) jobResource(sc scope, r *scheduler.JobRecord) JobDefinition {
	return JobDefinition{
		ID:         sc.jobID(r.Name),
		Type:       TypeJob,
		Name:       sc.jc + "/" + r.Name,
		Tags:       r.Tags,
		Properties: h.redact(r.Definition()),
		ETag:       r.ETag,
	}
}

// historyPrefix holds what the IDs and names of a job's history entries
// start with, made once for a page of them.
type historyPrefix struct{ id, name string }

func newHistoryPrefix(sc scope, job string) historyPrefix {
	return historyPrefix{id: sc.jobID(job) + "/history/", name: sc.jc + "/" + job + "/"}
}

// resource builds the response body of history entry e.
func (p historyPrefix) resource(e *scheduler.HistoryEntry) JobHistoryDefinition {
	var buf [historyIDLen]byte
	id := appendHistoryID(buf[:0], e)
	return JobHistoryDefinition{
		ID:   p.id + string(id),
		Type: TypeJobHistory,
		Name: p.name + string(id),
		Properties: JobHistoryDefinitionProperties{
			StartTime:             e.StartTime,
			EndTime:               e.EndTime,
			ExpectedExecutionTime: e.ExpectedExecutionTime,
			ActionName:            e.ActionName,
			Status:                e.Status,
			Message:               e.Message,
			RetryCount:            e.RetryCount,
			RepeatCount:           e.RepeatCount,
			ExecutionTag:          e.ExecutionTag,
			Faulted:               e.Faulted,
			Skipped:               e.Skipped,
			LastExpectedTime:      e.LastExpectedTime,
			Backfill:              e.Backfill,
			Manual:                e.Manual,
			LimitWaitMillis:       e.LimitWaitMillis,
			HTTPStatus:            e.HTTPStatus,
		},
	}
}

// maxTicks is .NET's DateTime.MaxValue.Ticks.
const maxTicks = 3155378975999999999

// unixEpochTicks is the Unix epoch in .NET ticks (100 ns since 0001-01-01).
const unixEpochTicks = 621355968000000000

// dotnetTicks returns t in .NET ticks.
func dotnetTicks(t time.Time) int64 {
	return unixEpochTicks + t.Unix()*10_000_000 + int64(t.Nanosecond())/100
}

// historyIDLen is the length of a history entry's identifier.
const historyIDLen = 41

// appendHistoryID appends the identifier of a history entry to b: two
// numbers of 20 digits, "A:B", such that newer entries have smaller
// identifiers.
func appendHistoryID(b []byte, e *scheduler.HistoryEntry) []byte {
	a := int64(maxTicks) - dotnetTicks(e.StartTime)
	if a < 0 {
		a = 0
	}
	// Entries that started in the same tick: the later occurrence, the
	// error action and the later retry come first.
	n := int64(e.RepeatCount)<<24 | int64(e.RetryCount)&0x7fffff
	if e.ActionName == scheduler.ErrorAction {
		n |= 1 << 23
	}
	b = appendPadded(b, a)
	b = append(b, ':')
	return appendPadded(b, int64(math.MaxInt64)-n)
}

// appendPadded appends x in decimal to b, padded with zeros to 20
// characters (a minus sign included), as fmt's %020d writes it.
func appendPadded(b []byte, x int64) []byte {
	var buf [20]byte
	d := strconv.AppendInt(buf[:0], x, 10)
	width := 20
	if x < 0 {
		b = append(b, '-')
		d, width = d[1:], width-1
	}
	for range width - len(d) {
		b = append(b, '0')
	}
	return append(b, d...)
}

// redact returns def without secrets, with client certificates described:
// def itself when it holds none, else a copy.
//
// The stored definition is shared read-only: redact copies only what it
// changes (the actions, requests, messages and authentications on the way
// to a secret) and shares the rest.
func (h *handler) redact(def *scheduler.Job) *scheduler.Job {
	if !hasSecrets(&def.Action) {
		return def
	}
	out := *def
	h.redactAction(&out.Action)
	return &out
}

// hasSecrets reports whether redactAction would change a.
func hasSecrets(a *action.Action) bool {
	for ; a != nil; a = a.ErrorAction {
		if a.Request != nil && a.Request.Authentication != nil || a.QueueMessage != nil ||
			a.ServiceBusQueueMessage != nil && a.ServiceBusQueueMessage.Authentication != nil ||
			a.ServiceBusTopicMessage != nil && a.ServiceBusTopicMessage.Authentication != nil {
			return true
		}
	}
	return false
}

// redactAction blanks the secrets of *a, which is the caller's own copy of
// the action; what a points to is copied before it is changed.
func (h *handler) redactAction(a *action.Action) {
	if a == nil {
		return
	}
	if a.Request != nil && a.Request.Authentication != nil {
		req, auth := *a.Request, *a.Request.Authentication
		req.Authentication = &auth
		a.Request = &req
		// The scheduler describes certificates when a job is put, as the
		// pfx is sealed from then on; jobs stored before that are
		// described here.
		if auth.Type == action.AuthClientCertificate && auth.Pfx != "" && auth.CertificateThumbprint == "" {
			if c := h.readCert(auth.Pfx, auth.Password); c != nil {
				exp := c.ExpirationDate
				auth.CertificateThumbprint = c.Thumbprint
				auth.CertificateSubjectName = c.SubjectName
				auth.CertificateExpirationDate = &exp
			}
		}
		auth.Password, auth.Pfx, auth.Secret = "", "", ""
	}
	if a.QueueMessage != nil {
		q := *a.QueueMessage
		q.SASToken = ""
		a.QueueMessage = &q
	}
	if m := a.ServiceBusQueueMessage; m != nil && m.Authentication != nil {
		c, auth := *m, *m.Authentication
		auth.SASKey = ""
		c.Authentication = &auth
		a.ServiceBusQueueMessage = &c
	}
	if m := a.ServiceBusTopicMessage; m != nil && m.Authentication != nil {
		c, auth := *m, *m.Authentication
		auth.SASKey = ""
		c.Authentication = &auth
		a.ServiceBusTopicMessage = &c
	}
	if a.ErrorAction != nil {
		ea := *a.ErrorAction
		h.redactAction(&ea)
		a.ErrorAction = &ea
	}
}

// certCacheSize bounds the cache of certificate descriptions.
const certCacheSize = 256

// certCache remembers the description of client certificates (nil for one
// that cannot be read), so that reading a job does not decode its PKCS#12
// data every time.
type certCache = lru.Cache[[sha256.Size]byte, *httpaction.Certificate]

func newCertCache() *certCache {
	return lru.New[[sha256.Size]byte, *httpaction.Certificate](certCacheSize, nil)
}

// readCert describes the certificate in pfx; nil when it cannot be read.
func (h *handler) readCert(pfx, password string) *httpaction.Certificate {
	hash := sha256.New()
	fmt.Fprintf(hash, "%d:%s:%s", len(pfx), pfx, password)
	var key [sha256.Size]byte
	hash.Sum(key[:0])
	if cert, ok := h.certs.Get(key); ok {
		return cert
	}
	cert, err := httpaction.ReadCertificate(pfx, password)
	if err != nil {
		cert = nil
	}
	cert, _ = h.certs.Add(key, cert)
	return cert
}
