package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command in-process and returns its exit status and
// output.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeJob writes a job definition to a temporary file.
func writeJob(t *testing.T, body string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "job.json")
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

const validJob = `{
	// comments and trailing commas are fine
	"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"},},
}`

// sizedJob returns a job definition of n bytes as compact JSON.
func sizedJob(n int) string {
	const head, tail = `{"action":{"type":"http","request":{"uri":"http://example.com/","method":"get","headers":{"x":"`, `"}}}}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

func TestValidate(t *testing.T) {
	validFile := writeJob(t, validJob)
	tests := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		stdout     string
		stderrHas  []string
		stderrNone bool
	}{
		{name: "valid file", args: []string{"validate", writeJob(t, validJob)}, code: 0, stdout: "ok\n", stderrNone: true},
		{name: "valid stdin", args: []string{"validate", "-"}, stdin: validJob, code: 0, stdout: "ok\n", stderrNone: true},
		{name: "documented example", args: []string{"validate", "../../testdata/azure-example.json"}, code: 0, stdout: "ok\n", stderrNone: true},
		{name: "invalid", args: []string{"validate", "-"}, code: 1,
			stdin: `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "FETCH"}},
				"recurrence": {"frequency": "day", "schedule": {"hours": [1, 25]}}, "statee": 1}`,
			stderrHas: []string{
				`action.request.method: "FETCH" is not an HTTP method (GET, PUT, POST, DELETE, PATCH, HEAD or OPTIONS)` + "\n" +
					"recurrence.schedule.hours[1]: 25 is not an hour (0-23)\n" +
					"statee: unknown field, did you mean \"state\"?\n",
			}},
		{name: "timeout", args: []string{"validate", "-"}, code: 1,
			stdin: `{"action": {"type": "http", "timeout": "PT30S", "request": {"uri": "http://example.com/", "method": "get"},
				"errorAction": {"type": "http", "timeout": "PT2H", "request": {"uri": "http://example.com/", "method": "post"}}}}`,
			stderrHas: []string{`action.errorAction.timeout: "PT2H" is out of range (PT1S to PT1H)` + "\n"}},
		{name: "syntax error", args: []string{"validate", "-"}, stdin: "{\n  \"action\": }", code: 1,
			stderrHas: []string{"line 2, column 13: "}},
		{name: "missing file", args: []string{"validate", filepath.Join(t.TempDir(), "nope.json")}, code: 1,
			stderrHas: []string{"jobclock validate: ", "nope.json", "no such file"}},
		{name: "no operand", args: []string{"validate"}, code: 2, stderrHas: []string{"Usage: jobclock validate [-min-retry-interval D] FILE|-..."}},
		{name: "stdin twice", args: []string{"validate", "-", "-"}, code: 2, stderrHas: []string{"- (standard input) may be given once"}},
		{name: "empty", args: []string{"validate", "-"}, stdin: "\n", code: 1,
			stderrHas: []string{"job: is empty; a job definition is a JSON object such as {\"action\": "}},
		{name: "run's demo", args: []string{"validate", "-min-retry-interval", "1s", "../../examples/demo.json"}, code: 0,
			stdout: "ok\n", stderrNone: true},
		{name: "run's demo, retries too frequent", args: []string{"validate", "../../examples/demo.json"}, code: 1,
			stderrHas: []string{`jobs.flaky.action.retryPolicy.retryInterval: "PT2S" is shorter than the minimum of PT15S` + "\n"}},
		{name: "run file with limits", args: []string{"validate", "-"}, code: 1,
			stdin: `{"name": "lim", "collection": {"properties": {"limits": [{"key": "host", "maxConcurrent": 5, "ratePerMinute": 120}, {"key": "Host", "maxConcurrent": 0}]}},
				"jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}}}}`,
			stderrHas: []string{
				`collection.properties.limits[1].key: "host" is also the key of collection.properties.limits[0]: give one limit per key` + "\n",
				"collection.properties.limits[1]: sets neither maxConcurrent nor ratePerMinute\n",
			}},
		{name: "run file naming calendars it does not hold", args: []string{"validate", "-"}, code: 1,
			stdin: `{"name": "cal", "calendars": {"holidays": {"properties": {"dates": ["2026-12-25"]}}},
				"jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}},
					"recurrence": {"frequency": "Day", "calendar": "holiday"}},
				"b": {"properties": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}},
					"recurrence": {"frequency": "Day", "calendar": "freeze"}}},
				"c": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}},
					"recurrence": {"frequency": "Day", "calendar": "holidays"}}}}`,
			stderrHas: []string{
				`jobs.a.recurrence.calendar: "holiday" is not a calendar of the file (it holds "holidays")` + "\n" +
					`jobs.b.properties.recurrence.calendar: "freeze" is not a calendar of the file (it holds "holidays")` + "\n",
			}},
		{name: "run file naming a calendar, with none", args: []string{"validate", "-"}, code: 1,
			stdin: `{"name": "cal", "jobs": {"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}},
				"recurrence": {"frequency": "Day", "calendar": "holidays"}}}}`,
			stderrHas: []string{`jobs.a.recurrence.calendar: "holidays" is not a calendar of the file (add it under "calendars")` + "\n"}},
		{name: "job file naming a calendar", args: []string{"validate", "-"}, code: 1,
			stdin: `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}},
				"recurrence": {"frequency": "Day", "calendar": "holidays"}}`,
			stderrHas: []string{`recurrence.calendar: "holidays" is not a calendar of the job's collection`}},
		{name: "storage queue names", args: []string{"validate", "-"}, code: 1,
			stdin: `{"action": {"type": "StorageQueue", "retryPolicy": {"retryType": "None"}, "queueMessage": {"storageAccount": "Bad Account!",
				"queueName": "UPPER_case", "sasToken": "sv=2020-01-01&sig=abc", "message": "hi"}}}`,
			stderrHas: []string{
				`action.queueMessage.queueName: "UPPER_case" has uppercase letters; a queue name is all lowercase` + "\n",
				`action.queueMessage.storageAccount: "Bad Account!" contains 'B'`,
			}},
		{name: "run file over its plan's quotas", args: []string{"validate", "-"}, code: 1,
			stdin: `{"name": "free", "collection": {"properties": {"sku": {"name": "Free"}}}, "jobs": {
				"a": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}, "recurrence": {"frequency": "Minute"}},
				"b": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}},
				"c": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}},
				"d": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}},
				"e": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}},
				"f": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}},
				"g": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}}}}`,
			stderrHas: []string{
				`jobs.a.recurrence: job collection "free": quota maxRecurrence (1 Hour) exceeded: job "a" can run 1m0s apart` + "\n",
				`jobs.g: job collection "free": quota maxJobCount (5) exceeded`,
			}},
		{name: "ARM job of a run file over its quota", args: []string{"validate", "-"}, code: 1,
			stdin: `{"name": "q", "collection": {"properties": {"quota": {"maxRecurrence": {"frequency": "Hour", "interval": 1}}}}, "jobs": {
				"a": {"properties": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}, "recurrence": {"frequency": "Minute"}}}}}`,
			stderrHas: []string{`jobs.a.properties.recurrence: job collection "q": quota maxRecurrence (1 Hour) exceeded: job "a" can run 1m0s apart` + "\n"}},
		{name: "job file every 10 seconds, as the library's default collection allows", args: []string{"validate", "-"}, code: 0,
			stdin:  `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}, "recurrence": {"cron": "*/10 * * * * *"}}`,
			stdout: "ok\n", stderrNone: true},
		{name: "envelope: its properties count toward the size limit, its tags do not", args: []string{"validate", "-"}, code: 0,
			stdin: `{"tags": {"team": "operations"}, "properties": ` + sizedJob(15990) + `}`, stdout: "ok\n", stderrNone: true},
		{name: "envelope over the size limit", args: []string{"validate", "-"}, code: 1,
			stdin:     "{\n  \"properties\": " + sizedJob(16001) + "\n}\n",
			stderrHas: []string{"properties: is 16001 bytes as compact JSON (without whitespace and comments), more than the limit of 16,000\n"}},
		{name: "several files", args: []string{"validate", "-min-retry-interval", "1s", "../../examples/demo.json", "-", validFile}, code: 1,
			stdin:  `{"name": "x y", "collection": {"properties": {"sku": {"name": "Cheap"}}}, "jobs": {"a": {"action": {"type": "Htp"}}, "9": {}}, "job": 1}`,
			stdout: "../../examples/demo.json: ok\n" + validFile + ": ok\n",
			stderrHas: []string{
				"-: collection.properties.sku.name: ",
				`-: job: unknown field, did you mean "jobs"?` + "\n",
				`-: jobs["9"]: is not a valid name: `,
				`-: jobs.a.action.type: "Htp" is not an action type, did you mean "Http"?` + "\n",
				"-: name: \"x y\" is not a valid name: ",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit status = %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			if stdout != tt.stdout {
				t.Errorf("stdout = %q, want %q", stdout, tt.stdout)
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr = %q, want it to contain %q", stderr, s)
				}
			}
			if tt.stderrNone && stderr != "" {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
		})
	}
}

// TestValidateJobFilesOverDefaultCount validates 51 files of one job, which
// go into the collection "default" one after the other: the 51st exceeds
// the Standard plan's 50 jobs, reported at "job", the file as a whole.
func TestValidateJobFilesOverDefaultCount(t *testing.T) {
	dir := t.TempDir()
	args := []string{"validate"}
	for i := range 51 {
		name := filepath.Join(dir, fmt.Sprintf("j%02d.json", i))
		if err := os.WriteFile(name, []byte(validJob), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, name)
	}
	code, _, stderr := runCLI(t, "", args...)
	want := args[51] + `: job: job collection "default": quota maxJobCount (50) exceeded: the collection already holds 50 jobs` + "\n"
	if code != 1 || stderr != want {
		t.Errorf("validate of 51 job files = %d, stderr %q; want 1, %q", code, stderr, want)
	}
}

func TestValidateInvalidOneLinePerProblem(t *testing.T) {
	code, _, stderr := runCLI(t, `{"state": "on"}`, "validate", "-")
	want := "action: is required\n" + `state: "on" is not a job state (Enabled or Disabled)` + "\n"
	if code != 1 || stderr != want {
		t.Errorf("validate = %d, stderr %q; want 1, %q", code, stderr, want)
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"help", "-h", "--help"} {
		code, stdout, _ := runCLI(t, "", arg)
		if code != 0 {
			t.Errorf("%s: exit status %d, want 0", arg, code)
		}
		for _, sub := range []string{"validate", "next", "run"} {
			if !strings.Contains(stdout, "jobclock "+sub) {
				t.Errorf("%s: usage %q does not list %q", arg, stdout, sub)
			}
		}
	}
	if code, _, stderr := runCLI(t, ""); code != 2 || !strings.Contains(stderr, "Usage:") {
		t.Errorf("no arguments: %d %q, want 2 and the usage", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "frobnicate"); code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q, want 2 and a message", code, stderr)
	}
}

// TestValidatePathsInReasons checks that in a collection file the paths a
// problem's reason names (where credentials go, the entry a repeated one
// repeats, where a misplaced member belongs) carry the same place in the
// file as the problem's own path.
func TestValidatePathsInReasons(t *testing.T) {
	const get = `"method": "get"`
	in := `{"name": "refs",
		"calendars": {"freeze": {"properties": {"rules": [{"frequency": "Day", "schedule": {"hours": [1, 1]}}]}}},
		"jobs": {
		"a": {"action": {"type": "http", "request": {"uri": "http://bob:pw@example.com/", ` + get + `}}},
		"b": {"properties": {"action": {"type": "http", "request": {"uri": "http://example.com/", ` + get + `}},
			"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday", "sunday", "Sunday"]}}}},
		"c": {"action": {"type": "http", "request": {"uri": "http://example.com/", ` + get + `}},
			"recurrence": {"frequency": "Month", "monthDays": [1]}},
		"d": {"properties": {"action": {"type": "http", "request": {"uri": "http://example.com/", ` + get + `}}}, "state": "Enabled"}}}`
	want := "calendars.freeze.properties.rules[0].schedule.hours[1]: 1 repeats calendars.freeze.properties.rules[0].schedule.hours[0]\n" +
		"jobs.a.action.request.uri: must not hold a user name or password; put them in jobs.a.action.request.authentication (type Basic)\n" +
		`jobs.b.properties.recurrence.schedule.weekDays[2]: "Sunday" repeats jobs.b.properties.recurrence.schedule.weekDays[1]` + "\n" +
		"jobs.c.recurrence.monthDays: unknown field, it belongs in jobs.c.recurrence.schedule\n" +
		"jobs.d.state: unknown field, it belongs in jobs.d.properties\n"
	code, _, stderr := runCLI(t, in, "validate", "-")
	if code != 1 || stderr != want {
		t.Errorf("validate = %d, stderr:\n%s\nwant 1, stderr:\n%s", code, stderr, want)
	}
}

// TestValidateAllProblemsAtOnce checks that validate reports, with the
// problems of the jobs of a collection file that do not parse, the
// problems that only putting finds (an executor's rules) of the jobs that
// do, each job's in turn, and nothing about a job that names a calendar
// the file could not read.
func TestValidateAllProblemsAtOnce(t *testing.T) {
	const http = `{"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}`
	in := `{"name": "all",
		"calendars": {"freeze": {"properties": {"dates": ["2026-13-01"]}}},
		"jobs": {
		"a": {"action": ` + http + `, "statee": "Enabled"},
		"b": {"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "acct",
			"queueName": "UPPER_case", "sasToken": "sv=2020-01-01&sig=abc", "message": "hi"}}},
		"c": {"action": ` + http + `, "recurrence": {"frequency": "Day", "calendar": "freeze"}},
		"d": {"action": ` + http + `, "recurrence": {"frequency": "Day", "calendar": "thaw"}},
		"e": {"action": ` + http + `}}}`
	want := `calendars.freeze.properties.dates[0]: "2026-13-01" is not a date written YYYY-MM-DD` + "\n" +
		`jobs.a.statee: unknown field, did you mean "state"?` + "\n" +
		`jobs.b.action.queueMessage.queueName: "UPPER_case" has uppercase letters; a queue name is all lowercase` + "\n" +
		`jobs.d.recurrence.calendar: "thaw" is not a calendar of the file (it holds "freeze")` + "\n"
	code, _, stderr := runCLI(t, in, "validate", "-")
	if code != 1 || stderr != want {
		t.Errorf("validate = %d, stderr:\n%s\nwant 1, stderr:\n%s", code, stderr, want)
	}
}

// TestValidateWholeOrMember checks that in a collection file a job, the
// collection or a calendar that is not an object is named by its own
// path, and a member of one that is named as the parser's whole input
// ("job", "collection", "calendar") by the member's path; in a file of
// one job, the whole is "job" and a member called so ["job"].
func TestValidateWholeOrMember(t *testing.T) {
	const job = `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}}`
	tests := []struct{ name, in, want string }{
		{"calendar not an object", `{"name": "x", "calendars": {"c": 5}, "jobs": {"a": ` + job + `}}`,
			"calendars.c: 5 is not an object\n"},
		{"member calendar of a calendar", `{"name": "x", "calendars": {"c": {"calendar": 5}}, "jobs": {"a": ` + job + `}}`,
			"calendars.c.calendar: unknown field\n"},
		{"job not an object", `{"name": "x", "jobs": {"a": 5}}`, "jobs.a: 5 is not an object\n"},
		{"member job of a job", `{"name": "x", "jobs": {"a": {"job": 1, "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}}}}`,
			"jobs.a.job: unknown field\n"},
		{"collection not an object", `{"name": "x", "collection": 5, "jobs": {"a": ` + job + `}}`, "collection: 5 is not an object\n"},
		{"member collection of the collection", `{"name": "x", "collection": {"collection": 1}, "jobs": {"a": ` + job + `}}`,
			"collection.collection: unknown field\n"},
		// A file of one job: the whole is "job", a member called so is
		// ["job"].
		{"file of one job not an object", `[1]`, "job: [1] is not an object\n"},
		{"member job of a file of one job", `{"job": 1, "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}}`,
			"[\"job\"]: unknown field\n"},
		{"member job of an envelope", `{"job": 1, "properties": ` + job + `}`, "[\"job\"]: unknown field\n"},
		{"member job of an envelope's properties", `{"properties": {"job": 1, "action": {"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}}}`,
			"properties.job: unknown field\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.in, "validate", "-")
			if code != 1 || stderr != tt.want {
				t.Errorf("validate = %d, stderr %q; want 1, %q", code, stderr, tt.want)
			}
		})
	}
}

// TestValidateBrokenCollectionChecksNoQuota: the jobs of a collection
// file whose collection cannot be read are checked under no quota, what
// holds under any plan, rather than under the default plan's, which
// would refuse a job that the quota meant refuses not (every 30 seconds
// under a maxRecurrence of 10 seconds); the problems of the jobs
// themselves are still reported.
func TestValidateBrokenCollectionChecksNoQuota(t *testing.T) {
	file := writeJob(t, `{"name": "c",
		"collection": {"properties": {"quota": {"maxRecurrence": {"frequency": "Second", "interval": 10}, "maxJobCount": "lots"}}},
		"jobs": {
			"fast": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "recurrence": {"frequency": "Second", "interval": 30}},
			"badq": {"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "account", "queueName": "UPPER_case",
				"sasToken": "sv=2020-01-01&sig=abc", "message": "hi"}}}}}`)
	code, _, stderr := runCLI(t, "", "validate", file)
	want := []string{`collection.properties.quota.maxJobCount: "lots" is not an integer`, "jobs.badq.action.queueMessage.queueName"}
	for _, w := range want {
		if code != 1 || !strings.Contains(stderr, w) {
			t.Errorf("validate = %d, stderr:\n%s\nwant 1 and %q", code, stderr, w)
		}
	}
	if strings.Contains(stderr, "fast") {
		t.Errorf("validate reports job fast, which no quota of the file refuses:\n%s", stderr)
	}
}
