package retry_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/retry"
)

func TestParseDuration(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"PT30S", 30 * time.Second},
		{"PT15S", 15 * time.Second},
		{"P1D", day},
		{"P1DT12H", 36 * time.Hour},
		{"PT1H30M", 90 * time.Minute},
		{"P18M", 540 * day},
		{"P1Y", 365 * day},
		{"P2W", 14 * day},
		{"P1Y2M3DT4H5M6S", 365*day + 60*day + 3*day + 4*time.Hour + 5*time.Minute + 6*time.Second},
		{"PT1.5S", 1500 * time.Millisecond},
		{"PT1,5S", 1500 * time.Millisecond},
		{"PT1.001S", 1001 * time.Millisecond},
		{"PT0.000000001S", time.Nanosecond},
		{"PT0.0000000019S", time.Nanosecond}, // digits beyond nanoseconds are dropped
		{"PT0.5H", 30 * time.Minute},
		{"P0.5D", 12 * time.Hour},
		{"pt30s", 30 * time.Second},
		{"PT0S", 0},
		{"00:01:00", time.Minute},
		{"00:00:30", 30 * time.Second},
		{"23:59:59", day - time.Second},
		{"1.02:03:04", day + 2*time.Hour + 3*time.Minute + 4*time.Second},
		{"00:00:01.5", 1500 * time.Millisecond},
		{"00:00:00.1234567", 123456700 * time.Nanosecond},
	}
	for _, tt := range tests {
		got, err := retry.ParseDuration(tt.in)
		if err != nil || time.Duration(got) != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, time.Duration(got), err, tt.want)
		}
	}
}

func TestParseDurationErrors(t *testing.T) {
	for _, in := range []string{
		"", "30", "30s", "P", "PT", "P1DT", "P1H", "PT1D", "PT1Y", "P1S", "P1", "PTS", "P.S", "PT1.S",
		"PT1H1H",    // repeated unit
		"PT1S1H",    // out of order
		"P1D1Y",     // out of order
		"PT1.5H30M", // fraction not on the last unit
		"-PT30S",    // negative
		"PT-30S",    // negative component
		"P1DTT1H",   // second T
		"PT1e3S",    // exponent
		"P300Y",     // beyond time.Duration
		"P200Y200Y", // repeated, would overflow
		"P9223372036854775807D",
		"24:00:00",   // hours over 23
		"00:60:00",   // minutes over 59
		"00:00:60",   // seconds over 59
		"-00:00:30",  // negative clock
		"+00:00:30",  // signed clock
		"00:00:NaN",  // not a number
		"00:00:1e1",  // exponent
		"1:2",        // two parts
		"00:00:30.",  // empty fraction
		"x.00:00:30", // bad days
	} {
		if got, err := retry.ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want error", in, time.Duration(got))
		} else if !strings.Contains(err.Error(), "is not a duration") || !strings.HasPrefix(err.Error(), `"`) {
			t.Errorf("ParseDuration(%q) error %q does not quote the input and say it is not a duration", in, err)
		}
	}
}

func TestDurationString(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "PT0S"},
		{30 * time.Second, "PT30S"},
		{day, "P1D"},
		{36 * time.Hour, "P1DT12H"},
		{day + time.Second, "P1DT1S"},
		{90 * time.Minute, "PT1H30M"},
		{1500 * time.Millisecond, "PT1.5S"},
		{time.Nanosecond, "PT0.000000001S"},
		{time.Minute + 1001*time.Millisecond, "PT1M1.001S"},
		{548 * day, "P548D"},
		{-30 * time.Second, "-PT30S"},
	}
	for _, tt := range tests {
		if got := retry.Duration(tt.d).String(); got != tt.want {
			t.Errorf("Duration(%v).String() = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestDurationRoundTrip(t *testing.T) {
	for _, d := range []time.Duration{
		0, 1, 999, time.Second - 1, 59*time.Second + 999999999, 1001 * time.Millisecond, 15 * time.Second,
		25*time.Hour + 7*time.Minute + 123456789, 548 * 24 * time.Hour, 1<<63 - 1,
	} {
		s := retry.Duration(d).String()
		got, err := retry.ParseDuration(s)
		if err != nil || time.Duration(got) != d {
			t.Errorf("ParseDuration(Duration(%d).String() = %q) = %d, %v", d, s, got, err)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	var v struct {
		D retry.Duration `json:"d"`
	}
	if err := json.Unmarshal([]byte(`{"d": "00:05:00"}`), &v); err != nil || time.Duration(v.D) != 5*time.Minute {
		t.Errorf("Unmarshal 00:05:00 = %v, %v", time.Duration(v.D), err)
	}
	out, err := json.Marshal(v)
	if err != nil || string(out) != `{"d":"PT5M"}` {
		t.Errorf("Marshal = %s, %v; want {\"d\":\"PT5M\"}", out, err)
	}
	if err := json.Unmarshal([]byte(`{"d": 60}`), &v); err == nil {
		t.Errorf("Unmarshal of a number succeeded, want error")
	}
	if err := json.Unmarshal([]byte(`{"d": "soon"}`), &v); err == nil {
		t.Errorf("Unmarshal of \"soon\" succeeded, want error")
	}
}

func TestTypeUnmarshal(t *testing.T) {
	var p retry.Policy
	if err := json.Unmarshal([]byte(`{"retryType": "fixed", "retryInterval": "PT1M", "retryCount": 3}`), &p); err != nil {
		t.Fatal(err)
	}
	want := retry.Policy{Type: retry.Fixed, Interval: retry.Duration(time.Minute), Count: ptr(3)}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("Unmarshal mismatch (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"retryType": "Linear"}`), &p); err != nil || p.Type != "Linear" || p.Type.Valid() {
		t.Errorf("unknown type: %q valid=%v err=%v, want kept as given and invalid", p.Type, p.Type.Valid(), err)
	}
	p = retry.Policy{}
	if err := json.Unmarshal([]byte(`{"retryType": "EXPONENTIAL", "minimumInterval": "PT20S", "maximumInterval": "PT1H"}`), &p); err != nil {
		t.Fatal(err)
	}
	want = retry.Policy{Type: retry.Exponential, MinimumInterval: retry.Duration(20 * time.Second), MaximumInterval: retry.Duration(time.Hour)}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("Unmarshal mismatch (-want +got):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRetriesAndDelay(t *testing.T) {
	tests := []struct {
		name    string
		p       *retry.Policy
		retries int
		delay   time.Duration
	}{
		{"nil is the default", nil, 4, 30 * time.Second},
		{"none", &retry.Policy{Type: retry.None, Count: ptr(5)}, 0, 30 * time.Second},
		{"fixed defaults", &retry.Policy{Type: retry.Fixed}, 4, 30 * time.Second},
		{"fixed set", &retry.Policy{Type: retry.Fixed, Count: ptr(2), Interval: retry.Duration(time.Minute)}, 2, time.Minute},
		{"fixed zero retries", &retry.Policy{Type: retry.Fixed, Count: ptr(0)}, 0, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := tt.p.Retries(); got != tt.retries {
			t.Errorf("%s: Retries() = %d, want %d", tt.name, got, tt.retries)
		}
		for retry := 1; retry <= 3; retry++ {
			if got := tt.p.Delay(retry, "tag"); got != tt.delay {
				t.Errorf("%s: Delay(%d) = %v, want %v", tt.name, retry, got, tt.delay)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		p    *retry.Policy
		opts *retry.ValidateOptions
		want []string
	}{
		{name: "nil", p: nil},
		{name: "none", p: &retry.Policy{Type: retry.None}},
		{name: "bounds", p: &retry.Policy{Type: retry.Fixed, Count: ptr(20), Interval: retry.Duration(retry.MaxInterval)}},
		{name: "minimum", p: &retry.Policy{Type: retry.Fixed, Count: ptr(0), Interval: retry.Duration(15 * time.Second)}},
		{name: "type missing", p: &retry.Policy{}, want: []string{"retryType: is required (None, Fixed or Exponential)"}},
		{name: "type unknown", p: &retry.Policy{Type: "Linear"}, want: []string{`retryType: "Linear" is not a retry type (None, Fixed or Exponential)`}},
		{name: "count high", p: &retry.Policy{Type: retry.Fixed, Count: ptr(21)}, want: []string{"retryCount: 21 is out of range (0-20)"}},
		{name: "count negative", p: &retry.Policy{Type: retry.Fixed, Count: ptr(-1)}, want: []string{"retryCount: -1 is out of range (0-20)"}},
		{name: "interval short", p: &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(14 * time.Second)},
			want: []string{`retryInterval: "PT14S" is shorter than the minimum of PT15S`}},
		{name: "interval short allowed", p: &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(time.Second)},
			opts: &retry.ValidateOptions{MinInterval: time.Second}},
		{name: "interval long", p: &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(retry.MaxInterval + time.Second)},
			want: []string{`retryInterval: "P548DT1S" is longer than the maximum of P548D`}},
		{name: "all", p: &retry.Policy{Type: "x", Count: ptr(99), Interval: retry.Duration(time.Second)},
			want: []string{`retryType: "x" is not a retry type (None, Fixed or Exponential)`, "retryCount: 99 is out of range (0-20)",
				`retryInterval: "PT1S" is shorter than the minimum of PT15S`}},
	}
	for _, tt := range tests {
		err := tt.p.Validate(tt.opts)
		var got []string
		if err != nil {
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var fe *retry.FieldError
				if !errors.As(e, &fe) {
					t.Errorf("%s: error %v is not a *FieldError", tt.name, e)
				}
				got = append(got, e.Error())
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Validate mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
