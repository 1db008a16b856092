package schedulertest_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/schedulertest"
	"github.com/jobclock/scheduler/store/memory"
)

// A Recorder stands in for an executor and keeps every attempt with its
// metadata.
func ExampleRecorder() {
	ctx := context.Background()
	rec := schedulertest.NewRecorder(nil)
	reg := new(action.Registry)
	report := action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r struct{ To string }) error {
		_, err := rec.Execute(ctx, req) // or register rec itself
		return err
	})
	s, _ := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	s.Start(ctx)
	defer s.Stop(ctx)
	s.Schedule(ctx, "once", nil, report.Action(struct{ To string }{"ops"}))

	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	attempts, err := rec.Wait(wait, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	a := attempts[0]
	fmt.Println(a.JobID, a.Type, string(a.Custom), "occurrence", a.Occurrence, "retry", a.Retry, "tag set:", a.ExecutionTag != "")
	// Output:
	// default/once Report {"To":"ops"} occurrence 1 retry 0 tag set: true
}

// A Receiver records HTTP requests with their x-ms-scheduler headers. Its
// Client reaches it through memory; schedulertest.New wires that up by
// itself.
func ExampleReceiver() {
	ctx := context.Background()
	rcv := schedulertest.NewReceiver()
	defer rcv.Close()
	reg := new(action.Registry)
	exec := httpaction.New(&httpaction.Options{Client: rcv.Client()})
	reg.Register(action.HTTP, exec)
	s, _ := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	s.Start(ctx)
	defer s.Stop(ctx)
	_, err := s.Schedule(ctx, "ping", nil, action.Action{Type: action.HTTP,
		Request: &action.HTTPRequest{URI: rcv.URL + "/ping", Method: "POST", Body: "hello"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got, err := rcv.Wait(wait, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := got[0]
	fmt.Println(d.Method, d.Path, d.Body, d.Status)
	fmt.Println(d.JobID, d.CollectionID, d.ExecutionTag != "", d.ClientRequestID != "")
	// Output:
	// POST /ping hello 200
	// default/ping default true true
}
