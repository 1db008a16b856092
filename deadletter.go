package scheduler

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jobclock/scheduler/action"
)

// FailureDocument is what an errorAction without a message of its own
// carries (an Http or Https request with a method that sends a body but
// no body, a queue or Service Bus message without "message"): the
// occurrence that faulted and each attempt of its main action, as JSON.
// It holds no secret: messages are those of history, where secrets are
// never written.
type FailureDocument struct {
	Collection   string    `json:"collection"`
	Job          string    `json:"job"`
	ExecutionTag string    `json:"executionTag"`
	ExpectedTime time.Time `json:"expectedTime"`
	// Occurrence is the occurrence number (history's repeatCount).
	Occurrence int              `json:"occurrence"`
	Attempts   []FailureAttempt `json:"attempts"`
}

// FailureAttempt is one attempt of the main action in a [FailureDocument].
type FailureAttempt struct {
	Retry      int             `json:"retry"`
	Start      time.Time       `json:"start"`
	End        time.Time       `json:"end"`
	Status     ExecutionStatus `json:"status"`
	Message    string          `json:"message,omitempty"`
	HTTPStatus int             `json:"httpStatus,omitempty"`
}

// CarriesFailure reports whether the errorAction a has no message of its
// own (no body for an HTTP POST, PUT or PATCH, no message for a queue),
// and so carries the failure document (see [FailureDocument]).
func CarriesFailure(a *action.Action) bool {
	switch {
	case a.Request != nil:
		m := strings.ToUpper(a.Request.Method)
		return a.Request.Body == "" && (m == "POST" || m == "PUT" || m == "PATCH")
	case a.QueueMessage != nil:
		return a.QueueMessage.Message == ""
	case a.ServiceBusQueueMessage != nil:
		return a.ServiceBusQueueMessage.Message == ""
	case a.ServiceBusTopicMessage != nil:
		return a.ServiceBusTopicMessage.Message == ""
	}
	return false
}

// withFailure returns a copy of the errorAction a that carries the failure
// document of occurrence o of r's job, read from its history; a itself
// when the history cannot be read.
func (s *Scheduler) withFailure(ctx context.Context, r *JobRecord, o *Occurrence, a *action.Action) (*action.Action, error) {
	var hist []HistoryEntry // none stored under NoHistory: the document lists no attempts
	if s.cfg.HistoryPerJob != NoHistory {
		var err error
		if hist, err = s.store.ListHistory(ctx, r.Collection, r.Name, HistoryFilter{}); err != nil {
			return a, err
		}
	}
	doc := FailureDocument{Collection: r.Collection, Job: r.Name, ExecutionTag: o.Tag, ExpectedTime: o.Expected.UTC(), Occurrence: o.Number,
		Attempts: []FailureAttempt{}}
	for _, h := range slices.Backward(hist) { // oldest first
		if h.ExecutionTag == o.Tag && h.ActionName == MainAction {
			doc.Attempts = append(doc.Attempts, FailureAttempt{Retry: h.RetryCount, Start: h.StartTime.UTC(), End: h.EndTime.UTC(),
				Status: h.Status, Message: h.Message, HTTPStatus: h.HTTPStatus})
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return a, err
	}
	c := *a
	switch {
	case a.Request != nil:
		req := *a.Request
		req.Body = string(b)
		if !slices.ContainsFunc(slices.Collect(maps.Keys(req.Headers)), func(k string) bool { return strings.EqualFold(k, "Content-Type") }) {
			req.Headers = maps.Clone(req.Headers)
			if req.Headers == nil {
				req.Headers = map[string]string{}
			}
			req.Headers["Content-Type"] = "application/json"
		}
		c.Request = &req
	case a.QueueMessage != nil:
		q := *a.QueueMessage
		q.Message = string(b)
		c.QueueMessage = &q
	case a.ServiceBusQueueMessage != nil:
		m := *a.ServiceBusQueueMessage
		m.Message = string(b)
		c.ServiceBusQueueMessage = &m
	case a.ServiceBusTopicMessage != nil:
		m := *a.ServiceBusTopicMessage
		m.Message = string(b)
		c.ServiceBusTopicMessage = &m
	}
	return &c, nil
}
