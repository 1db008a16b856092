package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// Client calls the management API. Create one with [NewClient]; it is safe
// for concurrent use. Errors from the API are *ResponseError values.
type Client struct {
	base       string
	token      string
	apiVersion string
	hc         *http.Client
}

// ClientOptions configure a Client. A nil *ClientOptions means every
// default.
type ClientOptions struct {
	// Token is sent as "Authorization: Bearer TOKEN". Empty sends none.
	Token string
	// HTTPClient sends the requests. Nil means http.DefaultClient.
	HTTPClient *http.Client
	// APIVersion is the api-version query parameter. Empty means
	// 2016-03-01.
	APIVersion string
}

// NewClient returns a client for the API served at baseURL, such as
// "http://127.0.0.1:8080". opts may be nil.
func NewClient(baseURL string, opts *ClientOptions) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), apiVersion: APIVersion20160301, hc: http.DefaultClient}
	if opts != nil {
		c.token = opts.Token
		if opts.HTTPClient != nil {
			c.hc = opts.HTTPClient
		}
		if opts.APIVersion != "" {
			c.apiVersion = opts.APIVersion
		}
	}
	return c
}

// CollectionRef names a job collection: its subscription, resource group
// and name.
type CollectionRef struct {
	Subscription, ResourceGroup, Collection string
}

func (r CollectionRef) path() string {
	return "/subscriptions/" + url.PathEscape(r.Subscription) + "/resourceGroups/" + url.PathEscape(r.ResourceGroup) +
		"/providers/Microsoft.Scheduler/jobCollections/" + url.PathEscape(r.Collection)
}

func (r CollectionRef) jobPath(job string) string { return r.path() + "/jobs/" + url.PathEscape(job) }

func (r CollectionRef) calendarPath(name string) string {
	return r.path() + "/calendars/" + url.PathEscape(name)
}

// WriteOptions are the options of the Client's PUT, PATCH and DELETE
// methods.
type WriteOptions struct {
	// IfMatch is sent as the If-Match header: the write succeeds only if
	// the resource's ETag is this ("*": if it exists). Empty sends none.
	IfMatch string
	// IfNoneMatch is sent as the If-None-Match header: "*" makes a PUT
	// create the resource only (412 when it exists), and a PATCH or
	// DELETE change nothing (412 when the resource exists, 404 when it
	// does not). The API refuses any other value (400). Empty sends none.
	IfNoneMatch string
}

// ListOptions are the options of ListJobs and ListHistory.
type ListOptions struct {
	// Filter is the $filter parameter, such as "state eq Enabled" for
	// ListJobs or "status eq Failed and faulted eq false" for
	// ListHistory. Empty sends none.
	Filter string
	// OrderBy is the $orderby parameter of ListJobs, such as
	// "properties/status/nextExecutionTime desc". Empty sends none (name
	// order); ListHistory refuses any (400), its entries being newest
	// first.
	OrderBy string
	// Top is the page size, 1 to 100. Zero sends none (100).
	Top int
	// Skip is the index of the first item. Zero sends none.
	Skip int
}

// ResponseError is an error response of the API.
type ResponseError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// RequestID is the x-ms-request-id header.
	RequestID string
	// Detail is the body's "error" object.
	Detail ErrorDetail
	// RetryAfter is the wait the Retry-After header asks for (with 429
	// TooManyRequests and some 503 responses); zero when there is none.
	// The Client does not retry by itself.
	RetryAfter time.Duration
}

// Error returns "httpapi: STATUS CODE: MESSAGE".
func (e *ResponseError) Error() string {
	return fmt.Sprintf("httpapi: %d %s: %s", e.StatusCode, e.Detail.Code, e.Detail.Message)
}

// do sends a request and decodes a 2xx response's body into out (when not
// nil). It returns the response for its headers.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body any, opts *WriteOptions, out any) (*http.Response, error) {
	if query == nil {
		query = url.Values{}
	}
	query.Set("api-version", c.apiVersion)
	var rd io.Reader
	if body != nil {
		var buf bytes.Buffer
		if raw, ok := body.([]byte); ok {
			buf.Write(raw)
		} else if err := json.NewEncoder(&buf).Encode(body); err != nil {
			return nil, fmt.Errorf("httpapi: encode request: %w", err)
		}
		rd = &buf
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path+"?"+query.Encode(), rd)
	if err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if opts != nil && opts.IfMatch != "" {
		v := opts.IfMatch
		if v != "*" && !strings.HasPrefix(v, `"`) {
			v = `"` + v + `"`
		}
		req.Header.Set("If-Match", v)
	}
	if opts != nil && opts.IfNoneMatch != "" {
		req.Header.Set("If-None-Match", opts.IfNoneMatch)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("httpapi: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("httpapi: %s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &ResponseError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("x-ms-request-id"),
			RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
		var er ErrorResponse
		if json.Unmarshal(data, &er) == nil && er.Error.Code != "" {
			e.Detail = er.Error
		} else {
			e.Detail = ErrorDetail{Code: http.StatusText(resp.StatusCode), Message: strings.TrimSpace(string(data))}
		}
		return resp, e
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp, fmt.Errorf("httpapi: %s %s: decode response: %w", method, path, err)
		}
	}
	return resp, nil
}

func etagOf(resp *http.Response) string {
	return strings.Trim(strings.TrimPrefix(resp.Header.Get("ETag"), "W/"), `"`)
}

// PutCollection creates or replaces the collection. def may be nil for a
// Standard, Enabled collection. created reports a 201. opts may be nil.
func (c *Client) PutCollection(ctx context.Context, ref CollectionRef, def *scheduler.JobCollection, opts *WriteOptions) (col *JobCollectionDefinition, created bool, err error) {
	if def == nil {
		def = &scheduler.JobCollection{}
	}
	col = new(JobCollectionDefinition)
	resp, err := c.do(ctx, http.MethodPut, ref.path(), nil, def, opts, col)
	if err != nil {
		return nil, false, err
	}
	col.ETag = etagOf(resp)
	return col, resp.StatusCode == http.StatusCreated, nil
}

// PatchCollection merge-patches the collection with patch, a JSON object
// such as {"properties": {"state": "Suspended"}}. opts may be nil.
func (c *Client) PatchCollection(ctx context.Context, ref CollectionRef, patch json.RawMessage, opts *WriteOptions) (*JobCollectionDefinition, error) {
	col := new(JobCollectionDefinition)
	resp, err := c.do(ctx, http.MethodPatch, ref.path(), nil, []byte(patch), opts, col)
	if err != nil {
		return nil, err
	}
	col.ETag = etagOf(resp)
	return col, nil
}

// GetCollection returns the collection.
func (c *Client) GetCollection(ctx context.Context, ref CollectionRef) (*JobCollectionDefinition, error) {
	col := new(JobCollectionDefinition)
	resp, err := c.do(ctx, http.MethodGet, ref.path(), nil, nil, nil, col)
	if err != nil {
		return nil, err
	}
	col.ETag = etagOf(resp)
	return col, nil
}

// ListCollections returns the collections of a subscription, or of one of
// its resource groups when resourceGroup is not empty.
func (c *Client) ListCollections(ctx context.Context, subscription, resourceGroup string) ([]JobCollectionDefinition, error) {
	path := "/subscriptions/" + url.PathEscape(subscription)
	if resourceGroup != "" {
		path += "/resourceGroups/" + url.PathEscape(resourceGroup)
	}
	var out JobCollectionListResult
	if _, err := c.do(ctx, http.MethodGet, path+"/providers/Microsoft.Scheduler/jobCollections", nil, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// DeleteCollection deletes the collection with its jobs. opts may be nil;
// with IfMatch it deletes only the collection with that ETag ("*": one
// that exists; the store checks the tag in the write that deletes it).
func (c *Client) DeleteCollection(ctx context.Context, ref CollectionRef, opts *WriteOptions) error {
	_, err := c.do(ctx, http.MethodDelete, ref.path(), nil, nil, opts, nil)
	return err
}

// EnableCollection sets the collection's state to Enabled.
func (c *Client) EnableCollection(ctx context.Context, ref CollectionRef) error {
	_, err := c.do(ctx, http.MethodPost, ref.path()+"/enable", nil, nil, nil, nil)
	return err
}

// DisableCollection sets the collection's state to Disabled.
func (c *Client) DisableCollection(ctx context.Context, ref CollectionRef) error {
	_, err := c.do(ctx, http.MethodPost, ref.path()+"/disable", nil, nil, nil, nil)
	return err
}

// PutJob creates or replaces the job with the definition def (the
// "properties" object). created reports a 201. opts may be nil.
func (c *Client) PutJob(ctx context.Context, ref CollectionRef, name string, def *scheduler.Job, opts *WriteOptions) (job *JobDefinition, created bool, err error) {
	if def == nil {
		return nil, false, fmt.Errorf("httpapi: PutJob %q: definition is nil", name)
	}
	d := *def
	d.Status = nil
	job = new(JobDefinition)
	resp, err := c.do(ctx, http.MethodPut, ref.jobPath(name), nil, map[string]any{"properties": &d}, opts, job)
	if err != nil {
		return nil, false, err
	}
	job.ETag = etagOf(resp)
	return job, resp.StatusCode == http.StatusCreated, nil
}

// PutJobJSON is PutJob with the body given as JSON, the envelope
// {"properties": {...}}.
func (c *Client) PutJobJSON(ctx context.Context, ref CollectionRef, name string, body json.RawMessage, opts *WriteOptions) (job *JobDefinition, created bool, err error) {
	job = new(JobDefinition)
	resp, err := c.do(ctx, http.MethodPut, ref.jobPath(name), nil, []byte(body), opts, job)
	if err != nil {
		return nil, false, err
	}
	job.ETag = etagOf(resp)
	return job, resp.StatusCode == http.StatusCreated, nil
}

// PatchJob merge-patches the job with patch, the envelope {"properties":
// {...}} with the fields to change. opts may be nil.
func (c *Client) PatchJob(ctx context.Context, ref CollectionRef, name string, patch json.RawMessage, opts *WriteOptions) (*JobDefinition, error) {
	job := new(JobDefinition)
	resp, err := c.do(ctx, http.MethodPatch, ref.jobPath(name), nil, []byte(patch), opts, job)
	if err != nil {
		return nil, err
	}
	job.ETag = etagOf(resp)
	return job, nil
}

// GetJob returns the job.
func (c *Client) GetJob(ctx context.Context, ref CollectionRef, name string) (*JobDefinition, error) {
	job := new(JobDefinition)
	resp, err := c.do(ctx, http.MethodGet, ref.jobPath(name), nil, nil, nil, job)
	if err != nil {
		return nil, err
	}
	job.ETag = etagOf(resp)
	return job, nil
}

// DeleteJob deletes the job and its history. opts may be nil; with
// IfMatch it deletes only the job with that ETag ("*": one that exists;
// the store checks the tag in the write that deletes it).
func (c *Client) DeleteJob(ctx context.Context, ref CollectionRef, name string, opts *WriteOptions) error {
	_, err := c.do(ctx, http.MethodDelete, ref.jobPath(name), nil, nil, opts, nil)
	return err
}

// RunJob runs the job once now. The result says when the run was
// requested: the earlier time when a run requested before has not
// started yet, which this request does not repeat.
func (c *Client) RunJob(ctx context.Context, ref CollectionRef, name string) (*RunResult, error) {
	out := new(RunResult)
	if _, err := c.do(ctx, http.MethodPost, ref.jobPath(name)+"/run", nil, nil, nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// BackfillJob runs the job's scheduled occurrences expected from from to
// to (inclusive), as [scheduler.Scheduler.BackfillJob] does, and returns
// their expected times; with opts.DryRun it only returns which would run.
// A zero from or to is sent as none (the API answers 400). opts may be
// nil: Missing occurrences, run.
func (c *Client) BackfillJob(ctx context.Context, ref CollectionRef, name string, from, to time.Time, opts *scheduler.BackfillOptions) (*BackfillResult, error) {
	req := BackfillRequest{From: isoTime(from), To: isoTime(to)}
	if opts != nil {
		req.Only, req.DryRun = string(opts.Only), opts.DryRun
	}
	out := new(BackfillResult)
	if _, err := c.do(ctx, http.MethodPost, ref.jobPath(name)+"/backfill", nil, &req, nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// isoTime writes t as an ISO 8601 date-time; empty for the zero time.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// PutCalendar creates or replaces the collection's exclusion calendar
// name. def may be nil for a calendar that excludes nothing. created
// reports a 201. opts may be nil.
func (c *Client) PutCalendar(ctx context.Context, ref CollectionRef, name string, def *scheduler.Calendar, opts *WriteOptions) (cal *CalendarDefinition, created bool, err error) {
	if def == nil {
		def = &scheduler.Calendar{}
	}
	cal = new(CalendarDefinition)
	resp, err := c.do(ctx, http.MethodPut, ref.calendarPath(name), nil, def, opts, cal)
	if err != nil {
		return nil, false, err
	}
	cal.ETag = etagOf(resp)
	return cal, resp.StatusCode == http.StatusCreated, nil
}

// GetCalendar returns the collection's exclusion calendar name.
func (c *Client) GetCalendar(ctx context.Context, ref CollectionRef, name string) (*CalendarDefinition, error) {
	cal := new(CalendarDefinition)
	resp, err := c.do(ctx, http.MethodGet, ref.calendarPath(name), nil, nil, nil, cal)
	if err != nil {
		return nil, err
	}
	cal.ETag = etagOf(resp)
	return cal, nil
}

// ListCalendars returns the collection's exclusion calendars, ordered by
// name. Their ETag fields are empty: GetCalendar returns a calendar's.
func (c *Client) ListCalendars(ctx context.Context, ref CollectionRef) ([]CalendarDefinition, error) {
	var out CalendarListResult
	if _, err := c.do(ctx, http.MethodGet, ref.path()+"/calendars", nil, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// DeleteCalendar deletes the collection's exclusion calendar name; the API
// refuses it (409) while jobs use it. opts may be nil; with IfMatch it
// deletes only the calendar with that ETag, and answers 412 for one that
// does not exist.
func (c *Client) DeleteCalendar(ctx context.Context, ref CollectionRef, name string, opts *WriteOptions) error {
	_, err := c.do(ctx, http.MethodDelete, ref.calendarPath(name), nil, nil, opts, nil)
	return err
}

func listQuery(opts *ListOptions) url.Values {
	q := url.Values{}
	if opts != nil {
		if opts.Filter != "" {
			q.Set("$filter", opts.Filter)
		}
		if opts.OrderBy != "" {
			q.Set("$orderby", opts.OrderBy)
		}
		if opts.Top != 0 {
			q.Set("$top", strconv.Itoa(opts.Top))
		}
		if opts.Skip != 0 {
			q.Set("$skip", strconv.Itoa(opts.Skip))
		}
	}
	return q
}

// ListJobs returns one page of the collection's jobs. opts may be nil.
func (c *Client) ListJobs(ctx context.Context, ref CollectionRef, opts *ListOptions) (*JobListResult, error) {
	out := new(JobListResult)
	if _, err := c.do(ctx, http.MethodGet, ref.path()+"/jobs", listQuery(opts), nil, nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListHistory returns one page of the job's history, newest first. opts
// may be nil.
func (c *Client) ListHistory(ctx context.Context, ref CollectionRef, name string, opts *ListOptions) (*JobHistoryListResult, error) {
	out := new(JobHistoryListResult)
	if _, err := c.do(ctx, http.MethodGet, ref.jobPath(name)+"/history", listQuery(opts), nil, nil, out); err != nil {
		return nil, err
	}
	return out, nil
}

// retryAfter reads a Retry-After value: whole seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return time.Duration(min(n, int64(math.MaxInt64/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
