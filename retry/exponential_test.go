package retry_test

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/retry"
)

func TestExponentialRange(t *testing.T) {
	s := time.Second
	type bounds struct{ Lo, Hi time.Duration }
	tests := []struct {
		name string
		p    *retry.Policy
		want []bounds // retries 1, 2, ...
	}{
		{"defaults: interval 30s, minimum 15s", &retry.Policy{Type: retry.Exponential},
			[]bounds{{15 * s, 30 * s}, {30 * s, 60 * s}, {60 * s, 120 * s}, {120 * s, 240 * s}}},
		{"Logic Apps' table with minimum and maximum", &retry.Policy{Type: retry.Exponential, Interval: retry.Duration(20 * s),
			MinimumInterval: retry.Duration(30 * s), MaximumInterval: retry.Duration(100 * s)},
			[]bounds{{30 * s, 30 * s}, {30 * s, 40 * s}, {40 * s, 80 * s}, {80 * s, 100 * s}, {100 * s, 100 * s}}},
		{"minimum above the interval", &retry.Policy{Type: retry.Exponential, Interval: retry.Duration(15 * s),
			MinimumInterval: retry.Duration(time.Minute)},
			[]bounds{{60 * s, 60 * s}, {60 * s, 60 * s}, {60 * s, 60 * s}, {60 * s, 120 * s}}},
		{"a lowered floor", &retry.Policy{Type: retry.Exponential, Interval: retry.Duration(s), MinimumInterval: retry.Duration(s)},
			[]bounds{{s, s}, {s, 2 * s}, {2 * s, 4 * s}}},
		{"fixed", &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(time.Minute)},
			[]bounds{{60 * s, 60 * s}, {60 * s, 60 * s}}},
		{"nil", nil, []bounds{{30 * s, 30 * s}}},
	}
	for _, tt := range tests {
		var got []bounds
		for n := 1; n <= len(tt.want); n++ {
			lo, hi := tt.p.Range(n)
			got = append(got, bounds{lo, hi})
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Range(1..%d) mismatch (-want +got):\n%s", tt.name, len(tt.want), diff)
		}
	}
}

// TestExponentialRangeSaturates: the ranges of late retries of a long
// interval stop at maximumInterval instead of overflowing.
func TestExponentialRangeSaturates(t *testing.T) {
	p := &retry.Policy{Type: retry.Exponential, Interval: retry.Duration(retry.MaxInterval)}
	for n := 1; n <= 100; n++ {
		lo, hi := p.Range(n)
		if lo < retry.MinInterval || hi > retry.MaxInterval || lo > hi {
			t.Fatalf("Range(%d) = [%v, %v], want within [%v, %v]", n, lo, hi, retry.MinInterval, retry.MaxInterval)
		}
		if n > 1 && hi != retry.MaxInterval {
			t.Errorf("Range(%d) upper end = %v, want the maximum %v", n, hi, retry.MaxInterval)
		}
	}
}

// TestExponentialDelay checks that Delay stays within Range, is the same
// for the same seed and retry, and spreads evenly across seeds.
func TestExponentialDelay(t *testing.T) {
	p := &retry.Policy{Type: retry.Exponential, Interval: retry.Duration(20 * time.Second), MaximumInterval: retry.Duration(time.Hour)}
	const seeds = 20000
	for n := 1; n <= 12; n++ {
		lo, hi := p.Range(n)
		var sum float64
		low, high := 0, 0 // in the lowest and highest tenth of the range
		for i := range seeds {
			seed := fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15)
			d := p.Delay(n, seed)
			if d < lo || d > hi {
				t.Fatalf("Delay(%d, %q) = %v, outside [%v, %v]", n, seed, d, lo, hi)
			}
			if again := p.Delay(n, seed); again != d {
				t.Fatalf("Delay(%d, %q) = %v, then %v", n, seed, d, again)
			}
			sum += float64(d)
			if span := hi - lo; span > 0 {
				switch {
				case d-lo < span/10:
					low++
				case hi-d < span/10:
					high++
				}
			}
		}
		if hi == lo {
			continue
		}
		mid := float64(lo+hi) / 2
		if mean := sum / seeds; math.Abs(mean-mid) > 0.02*float64(hi-lo) {
			t.Errorf("retry %d: mean delay %v, want about the middle of [%v, %v] (%v)", n, time.Duration(mean), lo, hi, time.Duration(mid))
		}
		for _, c := range []int{low, high} {
			if c < seeds/10*8/10 || c > seeds/10*12/10 {
				t.Errorf("retry %d: %d of %d delays in an outer tenth of the range, want about %d", n, c, seeds, seeds/10)
			}
		}
	}
	// The retries of one occurrence do not all sit at the same point of
	// their ranges.
	same := 0
	for i := range 1000 {
		seed := strconv.Itoa(i)
		lo1, hi1 := p.Range(2)
		lo2, hi2 := p.Range(3)
		f1 := float64(p.Delay(2, seed)-lo1) / float64(hi1-lo1)
		f2 := float64(p.Delay(3, seed)-lo2) / float64(hi2-lo2)
		if math.Abs(f1-f2) < 0.01 {
			same++
		}
	}
	if same > 50 {
		t.Errorf("%d of 1000 seeds put retries 2 and 3 at the same point of their ranges", same)
	}
}

func TestExponentialValidate(t *testing.T) {
	tests := []struct {
		name string
		p    *retry.Policy
		opts *retry.ValidateOptions
		want []string
	}{
		{name: "defaults", p: &retry.Policy{Type: retry.Exponential}},
		{name: "all set", p: &retry.Policy{Type: retry.Exponential, Count: ptr(20), Interval: retry.Duration(time.Minute),
			MinimumInterval: retry.Duration(15 * time.Second), MaximumInterval: retry.Duration(retry.MaxInterval)}},
		{name: "minimum equals maximum", p: &retry.Policy{Type: retry.Exponential, MinimumInterval: retry.Duration(time.Minute), MaximumInterval: retry.Duration(time.Minute)}},
		{name: "lowered floor", p: &retry.Policy{Type: retry.Exponential, Interval: retry.Duration(time.Second), MinimumInterval: retry.Duration(time.Second),
			MaximumInterval: retry.Duration(5 * time.Second)}, opts: &retry.ValidateOptions{MinInterval: time.Second}},
		{name: "minimum above maximum", p: &retry.Policy{Type: retry.Exponential, MinimumInterval: retry.Duration(time.Hour), MaximumInterval: retry.Duration(time.Minute)},
			want: []string{`minimumInterval: "PT1H" is longer than maximumInterval (PT1M)`}},
		{name: "maximum below the default minimum", p: &retry.Policy{Type: retry.Exponential, MaximumInterval: retry.Duration(5 * time.Second)},
			opts: &retry.ValidateOptions{MinInterval: time.Second},
			want: []string{`maximumInterval: "PT5S" is shorter than minimumInterval, which defaults to PT15S`}},
		{name: "out of range", p: &retry.Policy{Type: retry.Exponential, MinimumInterval: retry.Duration(time.Second), MaximumInterval: retry.Duration(600 * 24 * time.Hour)},
			want: []string{`minimumInterval: "PT1S" is shorter than the minimum of PT15S`, `maximumInterval: "P600D" is longer than the maximum of P548D`}},
		{name: "not for none", p: &retry.Policy{Type: retry.None, MaximumInterval: retry.Duration(time.Minute)},
			want: []string{`maximumInterval: "PT1M" does not apply to retryType None (only to Exponential)`}},
	}
	for _, tt := range tests {
		var got []string
		if err := tt.p.Validate(tt.opts); err != nil {
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				got = append(got, e.Error())
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Validate mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func ExamplePolicy_Delay() {
	p := &retry.Policy{Type: retry.Exponential, Interval: retry.Duration(20 * time.Second), MaximumInterval: retry.Duration(2 * time.Minute)}
	for n := 1; n <= p.Retries(); n++ {
		lo, hi := p.Range(n)
		d := p.Delay(n, "3f2a9c0d41b7e655") // an occurrence's execution tag
		fmt.Printf("retry %d: %v to %v, waits %v\n", n, lo, hi, d.Round(time.Millisecond))
	}
	// Output:
	// retry 1: 15s to 20s, waits 17.788s
	// retry 2: 20s to 40s, waits 22.644s
	// retry 3: 40s to 1m20s, waits 44.586s
	// retry 4: 1m20s to 2m0s, waits 1m26.92s
}
