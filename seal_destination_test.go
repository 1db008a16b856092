package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// newDestScheduler returns a Scheduler, not started, over a store that
// keeps data at rest, with the built-in executors, keys and a collection
// "c".
func newDestScheduler(t *testing.T, st scheduler.Store, keys *secrets.Keyring) *scheduler.Scheduler {
	t.Helper()
	reg := new(action.Registry)
	reg.Register(action.HTTP, httpaction.New(nil))
	reg.Register(action.HTTPS, httpaction.New(nil))
	storagequeue.Register(reg, nil)
	servicebus.Register(reg, nil)
	t.Cleanup(func() { reg.Close(context.Background()) })
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Executors: reg, Secrets: keys})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKeptSecretNotSentElsewhere: a write that changes where an action
// sends its secrets (an HTTP request's scheme, host or port, a storage
// queue's account, a Service Bus namespace), and keeps a secret stored
// sealed rather than giving it, is refused at that secret's path, saying
// where it went and where it would go; with the secret given again it is
// accepted, and a change that keeps the destination keeps the secret.
func TestKeptSecretNotSentElsewhere(t *testing.T) {
	const recur = `"recurrence": {"frequency": "Day", "interval": 1}, "state": "Disabled"`
	tests := []struct {
		name string
		def  string // the job as first put
		path string // the secret's path
		// from and to are the destinations the refusal names.
		from, to string
		moved    string // a patch that changes the destination only
		same     string // a patch that changes the action but not its destination
		given    string // a patch that changes the destination and gives the secret
		move     func(*scheduler.Job)
	}{
		{
			name: "http host",
			def: `{"action": {"type": "Https", "request": {"uri": "https://api.example.com/run", "method": "GET",
				"authentication": {"type": "Basic", "username": "alice", "password": "pw-1"}}}, ` + recur + `}`,
			path: "action.request.authentication.password", from: "https://api.example.com:443", to: "https://collect.example.net:443",
			moved: `{"action": {"request": {"uri": "https://collect.example.net/run"}}}`,
			same:  `{"action": {"request": {"uri": "https://API.example.com:443/other?day=2"}}}`,
			given: `{"action": {"request": {"uri": "https://collect.example.net/run", "authentication": {"password": "pw-2"}}}}`,
			move:  func(j *scheduler.Job) { j.Action.Request.URI = "https://collect.example.net/run" },
		},
		{
			name: "http port",
			def: `{"action": {"type": "Https", "request": {"uri": "https://api.example.com/run", "method": "GET",
				"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t", "audience": "a", "clientId": "c", "secret": "s-1"}}}, ` + recur + `}`,
			path: "action.request.authentication.secret", from: "https://api.example.com:443", to: "https://api.example.com:8443",
			moved: `{"action": {"request": {"uri": "https://api.example.com:8443/run"}}}`,
			same:  `{"action": {"request": {"method": "POST"}}}`,
			given: `{"action": {"request": {"uri": "https://api.example.com:8443/run", "authentication": {"secret": "s-2"}}}}`,
			move:  func(j *scheduler.Job) { j.Action.Request.URI = "https://api.example.com:8443/run" },
		},
		{
			name: "oauth authority",
			def: `{"action": {"type": "Https", "request": {"uri": "https://api.example.com/run", "method": "GET",
				"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t", "audience": "a", "clientId": "c", "secret": "s-1"}}}, ` + recur + `}`,
			path: "action.request.authentication.secret", from: "the default authority for tenant t", to: "https://login.example.net for tenant t",
			moved: `{"action": {"request": {"authentication": {"authority": "https://login.example.net/"}}}}`,
			same:  `{"action": {"request": {"method": "POST", "authentication": {"audience": "b"}}}}`,
			given: `{"action": {"request": {"authentication": {"authority": "https://login.example.net/", "secret": "s-2"}}}}`,
			move:  func(j *scheduler.Job) { j.Action.Request.Authentication.Authority = "https://login.example.net/" },
		},
		{
			name: "oauth tenant",
			def: `{"action": {"type": "Https", "request": {"uri": "https://api.example.com/run", "method": "GET",
				"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t", "audience": "a", "clientId": "c", "secret": "s-1"}}}, ` + recur + `}`,
			path: "action.request.authentication.secret", from: "for tenant t", to: "for tenant other",
			moved: `{"action": {"request": {"authentication": {"tenant": "other"}}}}`,
			same:  `{"action": {"request": {"authentication": {"tenant": "T"}}}}`,
			given: `{"action": {"request": {"authentication": {"tenant": "other", "secret": "s-2"}}}}`,
			move:  func(j *scheduler.Job) { j.Action.Request.Authentication.Tenant = "other" },
		},
		{
			name: "error action http host",
			def: `{"action": {"type": "Http", "request": {"uri": "http://example.com/run", "method": "GET"},
				"errorAction": {"type": "Https", "request": {"uri": "https://alerts.example.com/", "method": "POST",
				"authentication": {"type": "Basic", "username": "ops", "password": "pw-1"}}}}, ` + recur + `}`,
			path: "action.errorAction.request.authentication.password", from: "https://alerts.example.com:443", to: "https://collect.example.net:443",
			moved: `{"action": {"errorAction": {"request": {"uri": "https://collect.example.net/"}}}}`,
			same:  `{"action": {"request": {"uri": "http://collect.example.net/run"}, "errorAction": {"request": {"uri": "https://alerts.example.com/other"}}}}`,
			given: `{"action": {"errorAction": {"request": {"uri": "https://collect.example.net/", "authentication": {"password": "pw-2"}}}}}`,
			move:  func(j *scheduler.Job) { j.Action.ErrorAction.Request.URI = "https://collect.example.net/" },
		},
		{
			name: "storage account",
			def: `{"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "work",
				"sasToken": "sv=2020-01-01&sig=abc", "message": "m"}}, ` + recur + `}`,
			path: "action.queueMessage.sasToken", from: "storage account acct", to: "storage account other",
			moved: `{"action": {"queueMessage": {"storageAccount": "other"}}}`,
			same:  `{"action": {"queueMessage": {"queueName": "work2", "message": "m2"}}}`,
			given: `{"action": {"queueMessage": {"storageAccount": "other", "sasToken": "sv=2020-01-01&sig=def"}}}`,
			move:  func(j *scheduler.Job) { j.Action.QueueMessage.StorageAccount = "other" },
		},
		{
			name: "service bus namespace",
			def: `{"action": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "contoso-ns1", "queueName": "q",
				"transportType": "AMQP", "message": "m",
				"authentication": {"sasKeyName": "send", "sasKey": "key-1", "type": "SharedAccessKey"}}}, ` + recur + `}`,
			path: "action.serviceBusQueueMessage.authentication.sasKey", from: "Service Bus namespace contoso-ns1", to: "Service Bus namespace contoso-ns2",
			moved: `{"action": {"serviceBusQueueMessage": {"namespace": "contoso-ns2"}}}`,
			same:  `{"action": {"serviceBusQueueMessage": {"queueName": "q2"}}}`,
			given: `{"action": {"serviceBusQueueMessage": {"namespace": "contoso-ns2", "authentication": {"sasKey": "key-2"}}}}`,
			move:  func(j *scheduler.Job) { j.Action.ServiceBusQueueMessage.Namespace = "contoso-ns2" },
		},
		{
			name: "service bus topic namespace",
			def: `{"action": {"type": "ServiceBusTopic", "serviceBusTopicMessage": {"namespace": "contoso-ns1", "topicPath": "t",
				"transportType": "AMQP", "message": "m",
				"authentication": {"sasKeyName": "send", "sasKey": "key-1", "type": "SharedAccessKey"}}}, ` + recur + `}`,
			path: "action.serviceBusTopicMessage.authentication.sasKey", from: "Service Bus namespace contoso-ns1", to: "Service Bus namespace contoso-ns2",
			moved: `{"action": {"serviceBusTopicMessage": {"namespace": "CONTOSO-NS2"}}}`,
			same:  `{"action": {"serviceBusTopicMessage": {"namespace": "CONTOSO-NS1", "topicPath": "t2"}}}`,
			given: `{"action": {"serviceBusTopicMessage": {"namespace": "contoso-ns2", "authentication": {"sasKey": "key-2"}}}}`,
			move:  func(j *scheduler.Job) { j.Action.ServiceBusTopicMessage.Namespace = "contoso-ns2" },
		},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := durable{memory.New()}
			keys := newKeyring(t)
			s := newDestScheduler(t, st, keys)
			put := func(name string) *scheduler.JobRecord {
				t.Helper()
				r, err := s.PutJobJSON(ctx, "c", name, []byte(tt.def), nil)
				if err != nil {
					t.Fatalf("PutJobJSON: %v", err)
				}
				return r
			}
			refused := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, scheduler.ErrInvalid) || pathsOf(err) != tt.path {
					t.Fatalf("%s = %v, want ErrInvalid at %s", what, err, tt.path)
				}
				if msg := err.Error(); !strings.Contains(msg, tt.from) || !strings.Contains(msg, tt.to) || !strings.Contains(msg, "give the secret again") {
					t.Errorf("%s: %q does not say that the destination changed from %s to %s and that the secret must be given again", what, msg, tt.from, tt.to)
				}
			}

			// A patch that keeps the secret and moves the action is
			// refused, and the job stays as it was.
			before := put("moved")
			_, err := s.PatchJob(ctx, "c", "moved", []byte(tt.moved), nil)
			refused("PatchJob moving the action", err)
			if after, _ := st.GetJob(ctx, "c", "moved"); after.ETag != before.ETag {
				t.Errorf("the refused patch changed the job (ETag %s -> %s)", before.ETag, after.ETag)
			}

			// The definition read back, moved and put, is refused too,
			// as an object and as JSON.
			read, err := s.GetJob(ctx, "c", "moved")
			if err != nil {
				t.Fatal(err)
			}
			tt.move(read.Job)
			_, err = s.PutJob(ctx, "c", "moved", read.Job, nil)
			refused("PutJob of the read-back definition moved", err)
			data, err := json.Marshal(read.Job)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.PutJobJSON(ctx, "c", "moved", data, nil)
			refused("PutJobJSON of the read-back definition moved", err)
			// So is a batch, over this store, which is no BulkPutter,
			// and over the memory store, which is one.
			_, err = s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "moved", Job: read.Job}}, nil)
			refused("PutJobs of the read-back definition moved", err)
			bulk := newDestScheduler(t, memory.New(), keys)
			if _, err := bulk.PutJobJSON(ctx, "c", "moved", []byte(tt.def), nil); err != nil {
				t.Fatal(err)
			}
			read, err = bulk.GetJob(ctx, "c", "moved")
			if err != nil {
				t.Fatal(err)
			}
			tt.move(read.Job)
			_, err = bulk.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "moved", Job: read.Job}}, nil)
			refused("PutJobs of the read-back definition moved, into a BulkPutter", err)

			// A change that keeps the destination keeps the secret.
			put("same")
			if _, err := s.PatchJob(ctx, "c", "same", []byte(tt.same), nil); err != nil {
				t.Errorf("PatchJob keeping the destination: %v", err)
			}
			read, err = s.GetJob(ctx, "c", "same")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutJob(ctx, "c", "same", read.Job, nil); err != nil {
				t.Errorf("PutJob of the read-back definition after the patch: %v", err)
			}

			// Moved with the secret given again: accepted, and kept
			// for the new destination.
			put("given")
			if _, err := s.PatchJob(ctx, "c", "given", []byte(tt.given), nil); err != nil {
				t.Fatalf("PatchJob moving the action with the secret given: %v", err)
			}
			read, err = s.GetJob(ctx, "c", "given")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutJob(ctx, "c", "given", read.Job, nil); err != nil {
				t.Errorf("PutJob of the read-back definition at its new destination: %v", err)
			}
		})
	}
}

// TestSecretSealedWithoutDestination: a secret stored sealed for its job
// and field alone, as before sealed values named their destination, still
// opens for its attempts and for a write that keeps its destination, is
// refused by one that changes it, and ResealSecrets seals it again for
// its destination.
func TestSecretSealedWithoutDestination(t *testing.T) {
	ctx := context.Background()
	st := durable{memory.New()}
	keys := newKeyring(t)
	e := newSealEnv(t, st, keys, nil)
	for _, name := range []string{"a", "b"} {
		job := e.basicJob("")
		job.Action.ErrorAction = nil
		sealed, err := keys.Seal("pw-"+name, "c/"+name+"#action.request.authentication.password")
		if err != nil {
			t.Fatal(err)
		}
		job.Action.Request.Authentication.Password = sealed
		if err := st.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: job, State: scheduler.JobDisabled, ETag: "e"}); err != nil {
			t.Fatal(err)
		}
	}
	if got, h := e.run(t, "a"); got != "alice:pw-a" {
		t.Errorf("the server received %q (%s: %s), want alice:pw-a", got, h.Status, h.Message)
	}

	_, err := e.s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"uri": "https://collect.example.net/"}}}`), nil)
	if pathsOf(err) != "action.request.authentication.password" || !strings.Contains(err.Error(), "https://collect.example.net:443") {
		t.Errorf("PatchJob moving the action = %v, want a refusal at the password naming the new destination", err)
	}
	if _, err := e.s.PatchJob(ctx, "c", "a", []byte(`{"action": {"request": {"uri": "`+e.target.URL+`/other"}}}`), nil); err != nil {
		t.Errorf("PatchJob keeping the destination: %v", err)
	}
	read, err := e.s.GetJob(ctx, "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.PutJob(ctx, "c", "a", read.Job, nil); err != nil {
		t.Errorf("PutJob of the read-back definition: %v", err)
	}
	if got, h := e.run(t, "a"); got != "alice:pw-a" {
		t.Errorf("after the writes the server received %q (%s: %s), want alice:pw-a", got, h.Status, h.Message)
	}

	// Nor does such a value go where the job was first moved with
	// another secret.
	legacy := e.basicJob("")
	legacy.Action.ErrorAction = nil
	sealed, err := keys.Seal("pw-c", "c/c#action.request.authentication.password")
	if err != nil {
		t.Fatal(err)
	}
	legacy.Action.Request.Authentication.Password = sealed
	if err := st.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "c", Job: legacy, State: scheduler.JobDisabled, ETag: "e"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.PatchJob(ctx, "c", "c", []byte(`{"action": {"request": {"uri": "https://collect.example.net/", "authentication": {"password": "mine"}}}}`), nil); err != nil {
		t.Fatalf("PatchJob moving the action with a password: %v", err)
	}
	legacy.Action.Request.URI = "https://collect.example.net/"
	if _, err := e.s.PutJob(ctx, "c", "c", legacy, nil); pathsOf(err) != "action.request.authentication.password" {
		t.Errorf("PutJob of the first password where the job now goes = %v, want a refusal at the password", err)
	}
	if err := e.s.DeleteJob(ctx, "c", "c", nil); err != nil {
		t.Fatal(err)
	}

	// a was sealed again by its writes; b is by ResealSecrets.
	if n, err := e.s.ResealSecrets(ctx); err != nil || n != 1 {
		t.Errorf("ResealSecrets = %d, %v, want 1 job", n, err)
	}
	if n, err := e.s.ResealSecrets(ctx); err != nil || n != 0 {
		t.Errorf("second ResealSecrets = %d, %v, want 0", n, err)
	}
	r, _ := st.GetJob(ctx, "c", "b")
	if _, err := keys.Open(r.Job.Action.Request.Authentication.Password, "c/b#action.request.authentication.password"); err == nil {
		t.Errorf("after ResealSecrets job b's password still opens for its job and field alone")
	}
	if got, h := e.run(t, "b"); got != "alice:pw-b" {
		t.Errorf("after ResealSecrets the server received %q (%s: %s), want alice:pw-b", got, h.Status, h.Message)
	}
}
