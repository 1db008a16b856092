package action_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
)

func TestRegistry(t *testing.T) {
	var r action.Registry // the zero value is ready for use
	if _, ok := r.Lookup(action.HTTP); ok {
		t.Fatal("Lookup(Http) on an empty registry found an executor")
	}
	calls := 0
	first := action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		calls++
		return &action.Result{Message: "first " + req.JobID()}, nil
	})
	second := action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		return &action.Result{Message: "second"}, nil
	})
	r.Register("Custom", first)
	e, ok := r.Lookup("Custom")
	if !ok {
		t.Fatal("Lookup(Custom) after Register found nothing")
	}
	res, err := e.Execute(context.Background(), &action.Request{IDs: action.StaticIDs{Job: "c/j"}})
	if err != nil || res.Message != "first c/j" || calls != 1 {
		t.Errorf("Execute = %+v, %v (calls %d), want first c/j, nil, 1", res, err, calls)
	}
	r.Register("Custom", second) // replaces
	e, _ = r.Lookup("Custom")
	if res, _ := e.Execute(context.Background(), &action.Request{}); res.Message != "second" {
		t.Errorf("after a second Register, Execute = %q, want the replacement", res.Message)
	}
	if diff := cmp.Diff([]action.Type{"Custom"}, r.Types()); diff != "" {
		t.Errorf("Types() (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		t    action.Type
		e    action.Executor
	}{{"nil executor", "X", nil}, {"empty type", "", first}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register with %s did not panic", tc.name)
				}
			}()
			r.Register(tc.t, tc.e)
		}()
	}
}

// TestRegistryConcurrent: registrations from several goroutines while
// others look up are neither lost nor torn; a type once registered stays
// visible to every later lookup. Run it with -race.
func TestRegistryConcurrent(t *testing.T) {
	var r action.Registry
	base := action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) { return nil, nil })
	r.Register("Base", base)
	const writers, each = 4, 50
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, ok := r.Lookup("Base"); !ok {
					t.Error("Lookup(Base) failed while other types were registered")
					return
				}
				_ = r.Types()
			}
		})
	}
	var writes sync.WaitGroup
	for w := range writers {
		writes.Go(func() {
			for i := range each {
				ty := action.Type(fmt.Sprintf("T%d-%d", w, i))
				r.Register(ty, base)
				if _, ok := r.Lookup(ty); !ok {
					t.Errorf("Lookup(%s) right after its Register found nothing", ty)
				}
			}
		})
	}
	writes.Wait()
	close(stop)
	wg.Wait()
	got := r.Types()
	if len(got) != writers*each+1 {
		t.Fatalf("after %d registrations Types() has %d entries, want %d", writers*each+1, len(got), writers*each+1)
	}
	for w := range writers {
		for i := range each {
			if ty := action.Type(fmt.Sprintf("T%d-%d", w, i)); !slices.Contains(got, ty) {
				t.Errorf("Types() lacks %s", ty)
			}
		}
	}
}

func TestEnumsAcceptAnyCase(t *testing.T) {
	var a action.Action
	in := `{"type": "storagequeue", "serviceBusQueueMessage": {"transportType": "netmessaging"},
		"request": {"uri": "u", "method": "GET", "authentication": {"type": "activedirectoryoauth"}}}`
	if err := json.Unmarshal([]byte(in), &a); err != nil {
		t.Fatal(err)
	}
	got := []string{string(a.Type), string(a.ServiceBusQueueMessage.TransportType), string(a.Request.Authentication.Type)}
	want := []string{"StorageQueue", "NetMessaging", "ActiveDirectoryOAuth"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("canonical spellings (-want +got):\n%s", diff)
	}
	if !a.Type.Builtin() || action.Type("Custom").Builtin() {
		t.Error("Builtin() is wrong for StorageQueue or Custom")
	}
	var u action.Type
	if err := json.Unmarshal([]byte(`"gRPC"`), &u); err != nil || u != "gRPC" {
		t.Errorf("unknown type = %q, %v; want it kept as given", u, err)
	}
}

// Executors with each kind of Close method, counting the calls.
type ctxCloser struct{ n *int }

func (c *ctxCloser) Execute(context.Context, *action.Request) (*action.Result, error) {
	return nil, nil
}
func (c *ctxCloser) Close(context.Context) error { *c.n++; return errors.New("ctx closer") }

type errCloser struct{ n int }

func (c *errCloser) Execute(context.Context, *action.Request) (*action.Result, error) {
	return nil, nil
}
func (c *errCloser) Close() error { c.n++; return nil }

type plainCloser struct{ n int }

func (c *plainCloser) Execute(context.Context, *action.Request) (*action.Result, error) {
	return nil, nil
}
func (c *plainCloser) Close() { c.n++ }

// TestRegistryClose: Close closes each executor once, whatever the number
// of types it serves and whichever Close method it has, skips executors
// without one, and joins the errors.
func TestRegistryClose(t *testing.T) {
	var n int
	a, b, c := &ctxCloser{&n}, &errCloser{}, &plainCloser{}
	reg := new(action.Registry)
	reg.Register("A1", a)
	reg.Register("A2", a)
	reg.Register("B", b)
	reg.Register("C1", c)
	reg.Register("C2", c)
	reg.Register("F", action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) { return nil, nil }))
	err := reg.Close(context.Background())
	if err == nil || err.Error() != "ctx closer" {
		t.Errorf("Close = %v, want the one error", err)
	}
	if n != 1 || b.n != 1 || c.n != 1 {
		t.Errorf("Close calls = %d, %d, %d, want 1 each", n, b.n, c.n)
	}
	if _, ok := reg.Lookup("A1"); !ok {
		t.Error("Close unregistered the executors")
	}
}
