package action_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
)

type line struct {
	SKU      string  `json:"sku"`
	Quantity int     `json:"quantity"`
	Price    float64 `json:"price,omitempty"`
}

type audit struct {
	By string `json:"by"`
}

type order struct {
	audit                        // promoted: "by"
	ID       int64               `json:"id"`
	Customer string              `json:"customer"`
	Lines    []line              `json:"lines"`
	Tags     map[string]string   `json:"tags,omitempty"`
	Due      time.Time           `json:"due,omitzero"`
	Count    uint8               `json:"count,omitempty"`
	Ref      int                 `json:"ref,string,omitempty"`
	Extra    json.RawMessage     `json:"extra,omitempty"`
	Pairs    [2]int              `json:"pairs,omitzero"`
	ByID     map[int]bool        `json:"byId,omitempty"`
	Note     *string             `json:"note,omitempty"`
	Any      any                 `json:"any,omitempty"`
	Skip     string              `json:"-"`
	Nested   map[string][]string `json:"nested,omitempty"`
}

// Validate is called when a job is put.
func (o order) Validate() error {
	if o.ID < 0 {
		return &action.FieldError{Path: "id", Value: fmt.Sprint(o.ID), Reason: "is negative"}
	}
	if o.Customer == "nobody" {
		return errors.New("the customer is unknown")
	}
	return nil
}

func fieldErrors(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if err != nil {
			out = append(out, err.Error())
		}
	}
	walk(err)
	return out
}

func TestHandlerValidateAction(t *testing.T) {
	h := action.Handle(nil, "Order", func(ctx context.Context, req *action.Request, o order) error { return nil })
	tests := []struct {
		name   string
		custom string
		want   []string
	}{
		{name: "valid", custom: `{"id": 7, "customer": "acme", "by": "ops", "lines": [{"sku": "a", "quantity": 2, "price": 1.5}],
			"tags": {"k": "v"}, "due": "2030-01-02T03:04:05Z", "count": 255, "ref": "12", "extra": {"any": [1, "x"]},
			"pairs": [1, 2], "byId": {"3": true}, "note": "hi", "any": {"x": 1}, "nested": {"a": ["b"]}}`},
		{name: "absent", custom: ``},
		{name: "null", custom: `null`},
		{name: "keys in any case", custom: `{"ID": 7, "Customer": "acme", "LINES": []}`},
		{name: "nulls", custom: `{"id": null, "lines": null, "note": null, "tags": null}`},
		{name: "unknown members at every level", custom: `{"id": 1, "custmer": "x", "lines": [{"sku": "a"}, {"sku": "b", "qty": 3}], "Skip": "x"}`,
			want: []string{"custom.Skip: unknown field", `custom.custmer: unknown field, did you mean "customer"?`, "custom.lines[1].qty: unknown field"}},
		{name: "wrong types", custom: `{"id": "seven", "customer": 5, "lines": {"sku": "a"}, "tags": {"k": 1}, "count": 256,
			"due": "tomorrow", "ref": 12, "pairs": [1, 2, 3], "byId": {"x": true}, "note": false}`,
			want: []string{
				`custom.byId.x: is not an integer key`,
				`custom.count: 256 is out of range`,
				`custom.customer: 5 is not a string`,
				`custom.due: "tomorrow" parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"`,
				`custom.id: "seven" is not an integer`,
				`custom.lines: {"sku":"a"} is not an array`,
				`custom.note: false is not a string`,
				`custom.pairs: has 3 elements, more than the 2 it can hold`,
				`custom.ref: 12 is not a string (the field is encoded as a quoted value)`,
				`custom.tags.k: 1 is not a string`,
			}},
		{name: "numbers", custom: `{"id": 1.5, "count": -1, "lines": [{"sku": "a", "quantity": 1e400}, {"sku": "b", "price": 1e400}]}`,
			want: []string{"custom.count: -1 is negative", "custom.id: 1.5 is not an integer",
				"custom.lines[0].quantity: 1e400 is not an integer", "custom.lines[1].price: 1e400 is out of range"}},
		{name: "duplicate member", custom: `{"id": 1, "Id": 2}`, want: []string{`custom.id: is a duplicate of "Id"`}},
		{name: "odd key", custom: `{"a b": 1}`, want: []string{`custom["a b"]: unknown field`}},
		{name: "not an object", custom: `[1]`, want: []string{"custom: [1] is not an object"}},
		{name: "not JSON", custom: `{"id":`, want: []string{"custom: is not JSON: unexpected EOF"}},
		{name: "Validate with a path", custom: `{"id": -3}`, want: []string{"custom.id: -3 is negative"}},
		{name: "Validate without a path", custom: `{"id": 3, "customer": "nobody"}`, want: []string{"custom: the customer is unknown"}},
	}
	for _, tt := range tests {
		a := &action.Action{Type: "Order"}
		if tt.custom != "" {
			a.Custom = json.RawMessage(tt.custom)
		}
		got := fieldErrors(h.ValidateAction(a))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: ValidateAction mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestHandlerValidatePayload(t *testing.T) {
	h := action.Handle(nil, "Order", func(ctx context.Context, req *action.Request, o order) error { return nil })
	a := h.Action(order{ID: -1})
	if got := fieldErrors(h.ValidateAction(&a)); len(got) != 1 || got[0] != "custom.id: -1 is negative" {
		t.Errorf("ValidateAction of a Go payload = %q, want custom.id: -1 is negative", got)
	}
	other := action.Action{Type: "Order", Custom: json.RawMessage(`{"Amount": 5}`)}
	if got := fieldErrors(h.ValidateAction(&other)); len(got) != 1 || got[0] != `custom.Amount: unknown field, did you mean "count"?` {
		t.Errorf("ValidateAction of a payload of another type = %q, want custom.Amount: unknown field, did you mean \"count\"?", got)
	}
}

func TestHandlerExecute(t *testing.T) {
	var got []order
	var reg action.Registry
	h := action.HandleResult(&reg, "Order", func(ctx context.Context, req *action.Request, o order) (*action.Result, error) {
		got = append(got, o)
		if o.Customer == "fail" {
			return &action.Result{Message: "declined"}, errors.New("payment declined")
		}
		return &action.Result{Message: fmt.Sprintf("order %d", o.ID)}, nil
	})
	if e, ok := reg.Lookup("Order"); !ok || e != action.Executor(h) {
		t.Fatalf("Lookup(Order) = %v, %v; want the handler", e, ok)
	}
	if h.Type() != "Order" {
		t.Errorf("Type() = %q", h.Type())
	}
	due := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		a    action.Action
		want order
		msg  string
		err  string
	}{
		{name: "custom", a: action.Action{Type: "Order", Custom: json.RawMessage(`{"id": 7, "customer": "acme", "due": "2030-01-02T03:04:05Z", "gone": 1}`)},
			want: order{ID: 7, Customer: "acme", Due: due}, msg: "order 7"},
		{name: "Handler.Action", a: h.Action(order{ID: 8}), want: order{ID: 8}, msg: "order 8"},
		{name: "absent", a: action.Action{Type: "Order"}, want: order{}, msg: "order 0"},
		{name: "failure", a: action.Action{Type: "Order", Custom: json.RawMessage(`{"customer": "fail"}`)}, want: order{Customer: "fail"},
			msg: "declined", err: "payment declined"},
	} {
		got = nil
		res, err := h.Execute(ctx, &action.Request{Action: &tt.a})
		if diff := cmp.Diff([]order{tt.want}, got, cmp.AllowUnexported(order{})); diff != "" {
			t.Errorf("%s: payload mismatch (-want +got):\n%s", tt.name, diff)
		}
		if res == nil || res.Message != tt.msg || fmt.Sprint(err) != map[bool]string{true: "<nil>", false: tt.err}[tt.err == ""] {
			t.Errorf("%s: Execute = %+v, %v; want message %q, error %q", tt.name, res, err, tt.msg, tt.err)
		}
	}
	// A payload that does not decode fails the attempt without a call.
	got = nil
	res, err := h.Execute(ctx, &action.Request{Action: &action.Action{Type: "Order", Custom: json.RawMessage(`{"id": "x"}`)}})
	if err == nil || len(got) != 0 || res == nil || !strings.Contains(res.Message, "action Order: custom payload: ") {
		t.Errorf("Execute of a bad payload = %+v, %v (%d calls); want a failed attempt and no call", res, err, len(got))
	}
}

// Report is the payload of the Report action type.
type Report struct {
	To     string `json:"to"`
	Format string `json:"format,omitempty"`
}

func ExampleHandle() {
	reg := new(action.Registry)
	report := action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r Report) error {
		fmt.Printf("send the %s report to %s (occurrence %d)\n", r.Format, r.To, req.Occurrence)
		return nil
	})

	// A definition written in Go: the scheduler encodes the payload when
	// the job is put. report.Action(Report{...}) cannot be given another
	// type of payload.
	act := report.Action(Report{To: "ops@example.com", Format: "pdf"})
	fmt.Println(act.Type)

	// A definition written in JSON is checked against Report when the job
	// is put, each problem at its path.
	err := report.ValidateAction(&action.Action{Type: "Report", Custom: []byte(`{"to": 42, "fromat": "pdf"}`)})
	fmt.Println(err)

	// Each attempt decodes the payload and calls the function.
	exec, _ := reg.Lookup("Report")
	exec.Execute(context.Background(), &action.Request{
		Action:     &action.Action{Type: "Report", Custom: []byte(`{"to": "ops@example.com", "format": "csv"}`)},
		Occurrence: 3,
	})
	// Output:
	// Report
	// custom.fromat: unknown field, did you mean "format"?
	// custom.to: 42 is not a string
	// send the csv report to ops@example.com (occurrence 3)
}

// BenchmarkExecute compares one Execute of a typed Handler with an
// ExecutorFunc that decodes the same payload itself with encoding/json,
// and with one that ignores it.
func BenchmarkExecute(b *testing.B) {
	req := &action.Request{Action: &action.Action{Type: "Order",
		Custom: json.RawMessage(`{"id": 7, "customer": "acme", "lines": [{"sku": "a", "quantity": 2}, {"sku": "b", "quantity": 1}]}`)}}
	ctx := context.Background()
	execs := map[string]action.Executor{
		"ExecutorFuncNoop": action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) { return nil, nil }),
		"ExecutorFunc": action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			var o order
			return nil, json.Unmarshal(req.Action.Custom, &o)
		}),
		"Handler": action.Handle(nil, "Order", func(ctx context.Context, req *action.Request, o order) error { return nil }),
	}
	for _, name := range []string{"ExecutorFuncNoop", "ExecutorFunc", "Handler"} {
		b.Run(name, func(b *testing.B) {
			e := execs[name]
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Execute(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHandlerActionEncodes: a Handler's Action encodes the payload into
// Custom, and panics on a payload encoding/json cannot encode.
func TestHandlerActionEncodes(t *testing.T) {
	h := action.Handle(nil, "Any", func(ctx context.Context, req *action.Request, v any) error { return nil })
	if a := h.Action(map[string]int{"n": 1}); a.Type != "Any" || string(a.Custom) != `{"n":1}` {
		t.Errorf("Action = type %q custom %s, want Any {\"n\":1}", a.Type, a.Custom)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "Any payload: json: unsupported type: func()") {
			t.Errorf("Action of a func panicked with %v, want the encoding error", p)
		}
	}()
	h.Action(func() {})
}
