package dashboard_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"html"
	"math/big"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"software.sslmate.com/src/go-pkcs12"
)

// The job editor's form shows some members of a definition and writes
// them back into the JSON it was opened with: these tests check that a
// save loses no member, whichever the form shows and whichever it does
// not, over definitions that together set every member the definition
// types have.

// keepCollection is the collection of these tests: its quota allows
// recurrences of seconds.
const keepCollection = "sub/rg/keep"

// testPfx returns a base64 PKCS#12 file of a self-signed client
// certificate, with password.
func testPfx(t *testing.T, password string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "editor"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	data, err := pkcs12.Modern.Encode(key, cert, nil, password)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(data)
}

// keepJobs returns definitions (JSON properties) that together set every
// member of a job definition: an HTTP action each (the form shows those),
// with error actions of every type, one of type Http that calls an https
// URL, and one with a cron recurrence, which the form does not show.
func keepJobs(t *testing.T, recv string) map[string]string {
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	return map[string]string{
		"seconds": `{"startTime": "2026-01-05T09:00:00Z",
			"action": {"type": "Http", "request": {"method": "POST", "uri": "` + recv + `/ok?code=abc", "headers": {"X-Team": "ops", "Authorization": "Bearer s3cret"}, "body": "\n{\n  \"hello\": 1\n}\n"},
				"timeout": "PT30S",
				"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2, "maxRetryDuration": "PT10M", "permanentStatusCodes": [400, 404]},
				"errorAction": {"type": "StorageQueue", "queueMessage": {"storageAccount": "jobclockacct", "queueName": "failures", "sasToken": "?sv=2020&sig=abc", "message": "failed"}}},
			"recurrence": {"frequency": "Second", "interval": 5, "count": 1000, "endTime": "2030-01-01T00:00:00Z"},
			"runPolicy": {"missed": "RunOnce", "catchUpWindow": "PT1H", "overlap": "Skip", "pauseAfterFaults": 3}}`,
		"weekly": `{"action": {"type": "Https", "request": {"method": "PUT", "uri": "https://example.com/hook",
					"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t.example.com", "audience": "https://api.example.com", "clientId": "cid", "secret": "oauth-secret", "authority": "https://login.example.com"}},
				"retryPolicy": {"retryType": "Exponential", "retryInterval": "PT20S", "retryCount": 4, "minimumInterval": "PT15S", "maximumInterval": "PT1H"},
				"errorAction": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "jobclock-ns", "queueName": "failures", "transportType": "AMQP", "message": "failed",
					"authentication": {"sasKeyName": "k", "sasKey": "sas-secret", "type": "SharedAccessKey"},
					"brokeredMessageProperties": {"contentType": "text/plain", "correlationId": "c", "forcePersistence": true, "label": "l", "messageId": "m", "partitionKey": "p",
						"replyTo": "r", "replyToSessionId": "rs", "scheduledEnqueueTimeUtc": "2030-01-01T00:00:00Z", "sessionId": "p", "timeToLive": "PT1H", "to": "to", "viaPartitionKey": "p"},
					"customMessageProperties": {"team": "ops"}}}},
			"recurrence": {"frequency": "Week", "interval": 1, "timeZone": "Europe/Berlin", "window": "PT30S", "calendar": "holidays", "onExcluded": "Skip",
				"schedule": {"weekDays": ["Friday", "Monday"], "hours": [9], "minutes": [30], "seconds": [15]}},
			"state": "Disabled", "stateReason": "paused for the migration", "resumeTime": "` + future + `"}`,
		"monthly": `{"action": {"type": "Https", "request": {"method": "GET", "uri": "https://example.com/cert",
					"authentication": {"type": "ClientCertificate", "pfx": "` + testPfx(t, "pw") + `", "password": "pw"}},
				"errorAction": {"type": "ServiceBusTopic", "serviceBusTopicMessage": {"namespace": "jobclock-ns", "topicPath": "failures", "message": "failed", "transportType": "NetMessaging",
					"authentication": {"sasKeyName": "k", "sasKey": "sas-secret", "type": "SharedAccessKey"},
					"brokeredMessageProperties": {"contentType": "application/json", "correlationId": "c2", "forcePersistence": false, "label": "l2", "messageId": "m2", "partitionKey": "p2",
						"replyTo": "r2", "replyToSessionId": "rs2", "scheduledEnqueueTimeUtc": "2031-01-01T00:00:00Z", "sessionId": "p2", "timeToLive": "PT2H", "to": "to2", "viaPartitionKey": "p2"},
					"customMessageProperties": {"kind": "topic"}}}},
			"recurrence": {"frequency": "Month", "schedule": {"monthDays": [1, 15], "months": [1, 7], "hours": [6], "minutes": [0]}}}`,
		"nth": `{"action": {"type": "Https", "request": {"method": "HEAD", "uri": "https://example.com/basic", "authentication": {"type": "Basic", "username": "u", "password": "basic-secret"}},
				"errorAction": {"type": "Digest", "custom": {"to": "ops@example.com"}}},
			"recurrence": {"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": -1}]}}}`,
		"cron": `{"action": {"type": "Http", "request": {"method": "OPTIONS", "uri": "` + recv + `/ok"}},
			"recurrence": {"cron": "*/5 * * * *"}}`,
		"httpsurl": `{"action": {"type": "Http", "request": {"method": "GET", "uri": "https://example.com/plain"}},
			"recurrence": {"frequency": "Hour", "interval": 1}}`,
	}
}

// memberPaths returns the JSON paths of the members the type t has, list
// elements as "[]", an embedded struct's members as its own; a map, a
// time or raw JSON is one member. A type met again below itself (an
// action's errorAction) is not walked again: its members are those met
// above.
func memberPaths(t reflect.Type, path string, seen map[reflect.Type]bool, out map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[time.Time]() || t == reflect.TypeFor[json.RawMessage]() {
		out[path] = true
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case !f.IsExported() || name == "-":
				continue
			case f.Anonymous && name == "":
				memberPaths(f.Type, path, seen, out)
				continue
			case name == "":
				name = f.Name
			}
			memberPaths(f.Type, strings.TrimPrefix(path+"."+name, "."), seen, out)
		}
	case reflect.Slice, reflect.Array:
		memberPaths(t.Elem(), path+"[]", seen, out)
	default:
		out[path] = true
	}
}

// treePaths adds to out the paths of the members tree sets, as
// memberPaths writes them, an error action's as its action's; members
// below a path of leaves are not walked.
func treePaths(tree any, path string, leaves map[string]bool, out map[string]bool) {
	path = strings.ReplaceAll(path, "action.errorAction.", "action.")
	if leaves[path] {
		out[path] = true
		return
	}
	switch x := tree.(type) {
	case map[string]any:
		for k, v := range x {
			treePaths(v, strings.TrimPrefix(path+"."+k, "."), leaves, out)
		}
	case []any:
		for _, v := range x {
			treePaths(v, path+"[]", leaves, out)
		}
	default:
		out[path] = true
	}
}

var (
	inputPattern    = regexp.MustCompile(`<input ([^>]*)>`)
	attrPattern     = regexp.MustCompile(`(\w+)(?:="([^"]*)")?`)
	textareaPattern = regexp.MustCompile(`(?s)<textarea [^>]*name="(\w+)"[^>]*>(.*?)</textarea>`)
	selectPattern   = regexp.MustCompile(`(?s)<select name="(\w+)"[^>]*>(.*?)</select>`)
	optionPattern   = regexp.MustCompile(`<option(?: value="([^"]*)")?( selected)?>([^<]*)</option>`)
)

// formValues returns what a browser would send of the job editor's form
// as the page shows it, before any script runs.
func formValues(t *testing.T, p page) url.Values {
	t.Helper()
	start := strings.Index(p.body, `id="job-editor"`)
	if start < 0 {
		t.Fatalf("no job editor on the page (%d):\n%s", p.status, p.body)
	}
	body := p.body[start:]
	body = body[:strings.Index(body, "</form>")]
	f := url.Values{}
	for _, m := range inputPattern.FindAllStringSubmatch(body, -1) {
		attrs := map[string]string{}
		for _, a := range attrPattern.FindAllStringSubmatch(m[1], -1) {
			attrs[a[1]] = html.UnescapeString(a[2])
		}
		_, checked := attrs["checked"]
		if attrs["name"] == "" || (attrs["type"] == "radio" || attrs["type"] == "checkbox") && !checked {
			continue
		}
		f.Add(attrs["name"], attrs["value"])
	}
	for _, m := range textareaPattern.FindAllStringSubmatch(body, -1) {
		// A browser drops the newline right after <textarea>, and
		// sends each line break of a textarea as CRLF.
		v := strings.TrimPrefix(html.UnescapeString(m[2]), "\n")
		f.Set(m[1], strings.ReplaceAll(strings.ReplaceAll(v, "\r\n", "\n"), "\n", "\r\n"))
	}
	for _, m := range selectPattern.FindAllStringSubmatch(body, -1) {
		opts := optionPattern.FindAllStringSubmatch(m[2], -1)
		if len(opts) == 0 {
			continue
		}
		chosen := opts[0] // a browser's choice when none is selected
		for _, o := range opts {
			if o[2] != "" {
				chosen = o
				break
			}
		}
		v := chosen[3]
		if strings.Contains(chosen[0], `value="`) {
			v = chosen[1]
		}
		f.Set(m[1], html.UnescapeString(v))
	}
	return f
}

// keepEnv returns an env with keepCollection, its calendar, and the jobs
// of keepJobs.
func keepEnv(t *testing.T) (*env, map[string]string) {
	e := newEnv(t, envOptions{azure: true})
	col, err := scheduler.ParseCollection([]byte(`{"location": "West Europe", "properties": {"sku": {"name": "P20Premium"}, "quota": {"maxJobCount": 50, "maxRecurrence": {"frequency": "Second", "interval": 1}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e.collection(keepCollection, col)
	e.calendar(keepCollection, "holidays", `{"properties": {"dates": ["2030-12-25"]}}`)
	jobs := keepJobs(t, e.recv.URL)
	for name, def := range jobs {
		if _, err := e.s.PutJobJSON(ctx, keepCollection, name, []byte(def), nil); err != nil {
			t.Fatalf("put %s: %v", name, err)
		}
	}
	return e, jobs
}

// definitionOf returns the stored definition of a job as a JSON tree,
// without what the Scheduler keeps.
func definitionOf(t *testing.T, e *env, name string) (map[string]any, string) {
	t.Helper()
	r, err := e.s.GetJob(ctx, keepCollection, name)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Definition().Clone()
	d.Status = nil
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var tree map[string]any
	if err := json.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	return tree, r.ETag
}

func editPath(name string) string {
	return "/edit/job?collection=" + url.QueryEscape(keepCollection) + "&job=" + url.QueryEscape(name)
}

// TestJobEditorKeepsEveryMember: saving the editor unchanged, as the page
// first shows it and as its script redraws the JSON from the form, keeps
// every member of each definition; and the definitions set every member
// the definition types have.
func TestJobEditorKeepsEveryMember(t *testing.T) {
	e, jobs := keepEnv(t)

	leaves := map[string]bool{}
	memberPaths(reflect.TypeFor[scheduler.Job](), "", map[reflect.Type]bool{}, leaves)
	covered := map[string]bool{}
	for name := range jobs {
		tree, _ := definitionOf(t, e, name)
		treePaths(tree, "", leaves, covered)
	}
	for p := range leaves {
		if !covered[p] && !strings.HasPrefix(p, "status.") {
			t.Errorf("no definition of the test sets %s: add it to keepJobs", p)
		}
	}

	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range jobs {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, how := range []string{"page", "script"} {
			before, _ := definitionOf(t, e, name)
			f := formValues(t, e.get(editPath(name)))
			if how == "script" && f.Get("mode") == "form" {
				// The page's script shows the JSON the form makes
				// (POST /draft), and a save sends that.
				p := e.post("/draft", f)
				var a struct{ Definition string }
				if err := json.Unmarshal([]byte(p.body), &a); err != nil {
					t.Fatalf("%s: draft answers %d %s", name, p.status, p.body)
				}
				f.Set("definition", a.Definition)
			}
			wantStatus(t, name+", saved unchanged ("+how+")", e.post("/edit/job", f), http.StatusSeeOther)
			after, _ := definitionOf(t, e, name)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("%s: saving the editor unchanged (%s, mode %s) changed the definition (-before +after):\n%s", name, how, f.Get("mode"), diff)
			}
		}
	}
}

// TestJobEditorFieldKeepsOthers: changing one field of the form changes
// its member only, and drops the members it makes meaningless (a retry
// policy switched from Exponential drops its interval bounds, one
// switched to None its interval and count); every other member stays.
func TestJobEditorFieldKeepsOthers(t *testing.T) {
	e, jobs := keepEnv(t)
	for _, c := range []struct {
		job, field string
		value      []string
		path       []string // of the member that changes
		want       any
		drops      []string // members of the retry policy the change removes
	}{
		{"seconds", "method", []string{"PATCH"}, []string{"action", "request", "method"}, "PATCH", nil},
		{"seconds", "uri", []string{e.recv.URL + "/other"}, []string{"action", "request", "uri"}, e.recv.URL + "/other", nil},
		{"seconds", "headers", []string{"X-Team: web\nAuthorization: ••••••"}, []string{"action", "request", "headers"}, map[string]any{"X-Team": "web", "Authorization": "Bearer s3cret"}, nil},
		{"seconds", "body", []string{"hello"}, []string{"action", "request", "body"}, "hello", nil},
		{"seconds", "frequency", []string{"Minute"}, []string{"recurrence", "frequency"}, "Minute", nil},
		{"seconds", "interval", []string{"7"}, []string{"recurrence", "interval"}, float64(7), nil},
		{"weekly", "hours", []string{"10, 11"}, []string{"recurrence", "schedule", "hours"}, []any{float64(10), float64(11)}, nil},
		{"weekly", "minutes", []string{"45"}, []string{"recurrence", "schedule", "minutes"}, []any{float64(45)}, nil},
		{"weekly", "weekDays", []string{"Tuesday"}, []string{"recurrence", "schedule", "weekDays"}, []any{"Tuesday"}, nil},
		{"seconds", "startTime", []string{"2026-02-01T00:00:00Z"}, []string{"startTime"}, "2026-02-01T00:00:00Z", nil},
		{"seconds", "retryType", []string{"Exponential"}, []string{"action", "retryPolicy", "retryType"}, "Exponential", nil},
		{"seconds", "retryInterval", []string{"PT2M"}, []string{"action", "retryPolicy", "retryInterval"}, "PT2M", nil},
		{"seconds", "retryCount", []string{"5"}, []string{"action", "retryPolicy", "retryCount"}, float64(5), nil},
		{"weekly", "retryInterval", []string{"PT40S"}, []string{"action", "retryPolicy", "retryInterval"}, "PT40S", nil},
		{"weekly", "retryType", []string{"Fixed"}, []string{"action", "retryPolicy", "retryType"}, "Fixed",
			[]string{"minimumInterval", "maximumInterval"}},
		{"weekly", "retryType", []string{"None"}, []string{"action", "retryPolicy", "retryType"}, "None",
			[]string{"minimumInterval", "maximumInterval", "retryInterval", "retryCount"}},
		{"seconds", "retryType", []string{"None"}, []string{"action", "retryPolicy", "retryType"}, "None",
			[]string{"retryInterval", "retryCount"}},
	} {
		// Each case starts from the definition of keepJobs.
		if _, err := e.s.PutJobJSON(ctx, keepCollection, c.job, []byte(jobs[c.job]), nil); err != nil {
			t.Fatal(err)
		}
		before, _ := definitionOf(t, e, c.job)
		f := formValues(t, e.get(editPath(c.job)))
		if f.Get("mode") != "form" {
			t.Fatalf("%s opens in mode %q, want the form", c.job, f.Get("mode"))
		}
		f[c.field] = c.value
		what := c.job + ", " + c.field + " changed"
		wantStatus(t, what, e.post("/edit/job", f), http.StatusSeeOther)
		after, _ := definitionOf(t, e, c.job)
		got := take(after, c.path)
		take(before, c.path)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: %s (-want +got):\n%s", what, strings.Join(c.path, "."), diff)
		}
		for _, m := range c.drops {
			path := []string{"action", "retryPolicy", m}
			if take(before, path) == nil {
				t.Fatalf("%s: the stored definition has no %s to drop", what, strings.Join(path, "."))
			}
			if v := take(after, path); v != nil {
				t.Errorf("%s: %s = %v, want it dropped", what, strings.Join(path, "."), v)
			}
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("%s: other members changed (-before +after):\n%s", what, diff)
		}
	}
}

// take removes the member at path from tree and returns it.
func take(tree map[string]any, path []string) any {
	for _, k := range path[:len(path)-1] {
		tree, _ = tree[k].(map[string]any)
	}
	v := tree[path[len(path)-1]]
	delete(tree, path[len(path)-1])
	return v
}

// TestJobEditorFrequencies: the form offers Second where the
// collection's quota allows it, not elsewhere; and a job whose
// frequency the form does not offer shows it still.
func TestJobEditorFrequencies(t *testing.T) {
	e, _ := keepEnv(t)
	e.collection("sub/rg/std", nil)
	wantIn(t, "seconds allowed", e.get("/edit/job?collection="+url.QueryEscape(keepCollection)), `<option>Second</option>`)
	wantNotIn(t, "seconds not allowed", e.get("/edit/job?collection=sub%2Frg%2Fstd"), `<option>Second</option>`)
	wantIn(t, "a job of seconds", e.get(editPath("seconds")), `<option selected>Second</option>`)
	p := e.get(editPath("cron"))
	wantIn(t, "a cron job", p, `value="json" id="mode-json" checked`, `value="form" id="mode-form" disabled`)
}
