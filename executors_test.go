package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/azure"
	"github.com/jobclock/scheduler/store/memory"
)

const queueJob = `{
	"action": {"type": "StorageQueue",
		"queueMessage": {"storageAccount": "acct", "queueName": "queue", "sasToken": "?sv=2020&sig=x", "message": "hi"},
		"errorAction": {"type": "ServiceBusTopic", "serviceBusTopicMessage": {"namespace": "contoso-ns", "topicPath": "t",
			"authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "v"}, "message": "failed"}}}
}`

// TestAzureTypesNeedTheirExecutors: a Scheduler executes Http and Https on
// its own; a job of an Azure type is refused when it is put, at the path of
// the type, with the package and the call that add its executor, until the
// host registers them.
func TestAzureTypesNeedTheirExecutors(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	def, err := scheduler.ParseJob([]byte(queueJob), nil)
	if err != nil {
		t.Fatalf("ParseJob of Azure types without executors: %v", err)
	}

	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.PutJob(ctx, "c", "queue", def, nil)
	if !errors.Is(err, scheduler.ErrInvalid) {
		t.Fatalf("PutJob = %v, want ErrInvalid", err)
	}
	got := scheduler.ValidationErrors(err)
	want := []struct{ path, value, pkg, call string }{
		{"action.errorAction.type", `"ServiceBusTopic"`, `"github.com/jobclock/scheduler/action/servicebus"`, "servicebus.Register(reg, nil)"},
		{"action.type", `"StorageQueue"`, `"github.com/jobclock/scheduler/action/storagequeue"`, "storagequeue.Register(reg, nil)"},
	}
	if len(got) != len(want) {
		t.Fatalf("PutJob errors = %v, want %d", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Path != w.path || g.Value != w.value {
			t.Errorf("error %d at %s = %s, want %s", i, g.Path, g.Value, w.value)
		}
		for _, part := range []string{w.pkg, w.call, "azure.Register(reg, nil)", `"github.com/jobclock/scheduler/action/azure"`, "Config.Executors"} {
			if !strings.Contains(g.Reason, part) {
				t.Errorf("error %d %q does not name %s", i, g.Reason, part)
			}
		}
	}
	if _, err := s.GetJob(ctx, "c", "queue"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetJob after a refused put = %v, want ErrNotFound", err)
	}

	// PatchJob checks the same: an Http job patched into a queue job.
	httpJob, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}},
		"state": "Disabled"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "web", httpJob, nil); err != nil {
		t.Fatalf("PutJob of an Http job without any registry: %v", err)
	}
	_, err = s.PatchJob(ctx, "c", "web", []byte(`{"action": {"type": "StorageQueue", "request": null,
		"queueMessage": {"storageAccount": "acct", "queueName": "queue", "sasToken": "?sv=2020&sig=x", "message": "hi"}}}`), nil)
	if ve := scheduler.ValidationErrors(err); len(ve) != 1 || ve[0].Path != "action.type" {
		t.Errorf("PatchJob into a StorageQueue job = %v, want one error at action.type", err)
	}

	// One line adds every Azure type.
	reg := new(action.Registry)
	azure.Register(reg, nil)
	defer reg.Close(ctx)
	s2, err := scheduler.New(memory.New(), &scheduler.Config{Logger: quiet, Executors: reg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.PutJob(ctx, "c", "queue", def, nil); err != nil {
		t.Errorf("PutJob with azure.Register: %v", err)
	}
}

// TestJobWithoutExecutorFailsItsAttempt: a job stored by a Scheduler that
// had the executor, run by one that has not (two processes sharing a store
// with different registries), fails its attempt with the same advice.
func TestJobWithoutExecutorFailsItsAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		quiet := slog.New(slog.DiscardHandler)
		st := memory.New()
		reg := new(action.Registry)
		reg.Register(action.StorageQueue, action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) {
			return &action.Result{Message: "sent"}, nil
		}))
		writer, err := scheduler.New(st, &scheduler.Config{Logger: quiet, Executors: reg})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writer.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		def, err := scheduler.ParseJob([]byte(`{"action": {"type": "StorageQueue", "retryPolicy": {"retryType": "None"},
			"queueMessage": {"storageAccount": "acct", "queueName": "queue", "sasToken": "?sv=2020&sig=x", "message": "hi"}}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writer.PutJob(ctx, "c", "queue", def, nil); err != nil {
			t.Fatal(err)
		}

		hist := make(chan scheduler.HistoryEntry, 1)
		runner, err := scheduler.New(st, &scheduler.Config{Logger: quiet, OnHistory: func(h scheduler.HistoryEntry) { hist <- h }})
		if err != nil {
			t.Fatal(err)
		}
		if err := runner.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer runner.Stop(ctx)
		select {
		case h := <-hist:
			if h.Status != scheduler.StatusFailed || !strings.Contains(h.Message, "storagequeue.Register(reg, nil)") {
				t.Errorf("history = %s %q, want Failed naming storagequeue.Register", h.Status, h.Message)
			}
		case <-time.After(time.Minute):
			t.Fatal("the job did not run")
		}
	})
}

// TestCoreImportsNoAzure: the core packages link no Azure SDK and no AMQP
// library; only action/azure, action/storagequeue and action/servicebus
// (and the command) do.
func TestCoreImportsNoAzure(t *testing.T) {
	core := []string{".", "./recurrence", "./retry", "./action", "./action/http",
		"./store/memory", "./store/sqlite", "./store/postgres", "./store/storetest", "./httpapi", "./schedulertest", "./dashboard"}
	bad := func(pkg string) bool {
		return strings.HasPrefix(pkg, "github.com/Azure/") || strings.Contains(strings.ToLower(pkg), "amqp")
	}
	deps := func(pkgs ...string) []string {
		out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)...).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("go list: %v\n%s", err, ee.Stderr)
			}
			t.Fatalf("go list: %v", err)
		}
		return strings.Fields(string(out))
	}
	for _, pkg := range core {
		for _, d := range deps(pkg) {
			if bad(d) {
				t.Errorf("%s imports %s", pkg, d)
			}
		}
	}
	// The check itself finds them where they belong.
	found := 0
	for _, d := range deps("./action/azure") {
		if bad(d) {
			found++
		}
	}
	if found == 0 {
		t.Error("action/azure links no Azure or AMQP package: the check above cannot see them")
	}
}

// TestCoreLinksNoOpenTelemetry: no package a program links without opting
// in imports OpenTelemetry (go.opentelemetry.io): neither the root package
// nor the REST API, the executors, the stores, the dashboard or
// schedulertest. OpenTelemetry is in package telemetry, a module of its own
// that a host imports to opt in.
func TestCoreLinksNoOpenTelemetry(t *testing.T) {
	pkgs := []string{".", "./recurrence", "./retry", "./secrets", "./action", "./action/http", "./action/storagequeue",
		"./action/servicebus", "./action/azure", "./store/memory", "./store/sqlite", "./store/postgres",
		"./store/storetest", "./httpapi", "./dashboard", "./schedulertest"}
	bad := func(pkg string) bool { return strings.HasPrefix(pkg, "go.opentelemetry.io/") }
	list := func(dir string, pkgs ...string) []string {
		cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("go list in %s: %v\n%s", dir, err, ee.Stderr)
			}
			t.Fatalf("go list in %s: %v", dir, err)
		}
		return strings.Fields(string(out))
	}
	for _, d := range list(".", pkgs...) {
		if bad(d) {
			t.Errorf("the core imports %s", d)
		}
	}
	// The check itself finds OpenTelemetry where it belongs.
	found := false
	for _, d := range list("telemetry", ".") {
		found = found || bad(d)
	}
	if !found {
		t.Error("package telemetry links no OpenTelemetry package: the check above cannot see it")
	}
}

// linked builds the program of package src into dir and reports which of
// syms (full symbol names, as go tool nm prints them) it links.
func linked(t *testing.T, dir, src string, syms ...string) map[string]bool {
	t.Helper()
	bin := filepath.Join(dir, "prog")
	if out, err := exec.Command("go", "build", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", src, err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	in := map[string]bool{}
	for _, name := range syms {
		in[name] = strings.Contains(string(out), " "+name+"\n")
	}
	return in
}

// TestNewOnlyLinksNoParser: a program that makes a Scheduler and never
// puts a job links neither the job parser nor the put path (about 1.4 MB),
// which a hook set by the package's initialisation would drag into every
// program that imports it. The same program with a PutJob call links
// them, so the check can fail.
func TestNewOnlyLinksNoParser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	dir := t.TempDir()
	syms := []string{"github.com/jobclock/scheduler/jobdef.ParseJobResource", "github.com/jobclock/scheduler.(*Scheduler).putJobAt"}
	for name, in := range linked(t, dir, "./testdata/newonly", syms...) {
		if in {
			t.Errorf("a program that only calls New links %s", name)
		}
	}
	// The control: a program that puts a job given as JSON links both.
	for name, in := range linked(t, dir, "./testdata/putjob", syms...) {
		if !in {
			t.Errorf("the control program that puts a job does not link %s: the check cannot see it", name)
		}
	}
}

// TestNewOnlyLinksNoHTTPClient: a program that makes a Scheduler and never
// runs it links neither the HTTP client's transport nor the TLS client
// (about 1.9 MB with what they link): the built-in HTTP executor makes its
// transports on first use, and no field of its type refers to a
// *net/http.Transport, whose type leads the linker to the methods of
// *crypto/tls.Conn. The same program started and stopped links them, so
// the check can fail.
func TestNewOnlyLinksNoHTTPClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	dir := t.TempDir()
	syms := []string{"net/http.(*Transport).dialConn", "crypto/tls.(*Conn).clientHandshake"}
	for name, in := range linked(t, dir, "./testdata/newonly", syms...) {
		if in {
			t.Errorf("a program that only calls New links %s", name)
		}
	}
	for name, in := range linked(t, dir, "./testdata/started", syms...) {
		if !in {
			t.Errorf("the control program that starts and stops a Scheduler does not link %s: the check cannot see it", name)
		}
	}
}
