package httpapi

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestHistoryIDService checks the first part of the history ID against an
// ID the service returned: 2519635708786287866 for an attempt that
// started at 2015-08-04T23:12:01.3712133Z.
func TestHistoryIDService(t *testing.T) {
	start := time.Date(2015, 8, 4, 23, 12, 1, 371213300, time.UTC)
	id := string(appendHistoryID(nil, &scheduler.HistoryEntry{StartTime: start, RepeatCount: 29967, ActionName: scheduler.MainAction}))
	a, _, _ := strings.Cut(id, ":")
	if want := "02519635708786287866"; a != want {
		t.Errorf("appendHistoryID(start %v) first part = %s, want %s", start, a, want)
	}
	if len(id) != 41 {
		t.Errorf("appendHistoryID = %q, want two 20-digit numbers", id)
	}
}

// TestHistoryIDOrder checks that IDs sort from the newest entry to the
// oldest, also between entries that started at the same instant.
func TestHistoryIDOrder(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Oldest first, as the scheduler records them.
	entries := []scheduler.HistoryEntry{
		{StartTime: t0, RepeatCount: 1, RetryCount: 0, ActionName: scheduler.MainAction},
		{StartTime: t0, RepeatCount: 1, RetryCount: 1, ActionName: scheduler.MainAction},
		{StartTime: t0, RepeatCount: 1, RetryCount: 0, ActionName: scheduler.ErrorAction},
		{StartTime: t0, RepeatCount: 2, RetryCount: 0, ActionName: scheduler.MainAction},
		{StartTime: t0.Add(100 * time.Nanosecond), RepeatCount: 1, ActionName: scheduler.MainAction},
		{StartTime: t0.Add(time.Hour), RepeatCount: 3, RetryCount: 5, ActionName: scheduler.MainAction},
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, string(appendHistoryID(nil, &e)))
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	got := slices.Clone(ids)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("sorted IDs = %q, want newest first %q", got, want)
	}
}

// TestAppendPadded: the numbers of a history ID are written as fmt's
// %020d writes them, the sign of a negative one (from a negative
// repeatCount) included.
func TestAppendPadded(t *testing.T) {
	for _, x := range []int64{0, 7, 2519635708786287866, math.MaxInt64, -1, -42, -999999999999999999, math.MinInt64} {
		if got, want := string(appendPadded([]byte("x"), x)), "x"+fmt.Sprintf("%020d", x); got != want {
			t.Errorf("appendPadded(%d) = %q, want %q", x, got, want)
		}
	}
}

func TestCanonicalPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/subscriptions/S/resourcegroups/RG/providers/microsoft.scheduler/jobcollections/JC",
			"/subscriptions/S/resourceGroups/RG/providers/Microsoft.Scheduler/jobCollections/JC"},
		{"/SUBSCRIPTIONS/s/PROVIDERS/MICROSOFT.SCHEDULER/JOBCOLLECTIONS",
			"/subscriptions/s/providers/Microsoft.Scheduler/jobCollections"},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/ENABLE",
			"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/enable"},
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/Jobs/Run/RUN",
			"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/Run/run"},
		// Names in name positions keep their case, even when they look
		// like literals.
		{"/subscriptions/Jobs/resourceGroups/History/providers/Microsoft.Scheduler/jobCollections/Jobs/jobs/History/history",
			"/subscriptions/Jobs/resourceGroups/History/providers/Microsoft.Scheduler/jobCollections/Jobs/jobs/History/history"},
		// Other providers and other paths are left alone.
		{"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Web/SITES", "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Web/SITES"},
		{"/healthz", "/healthz"},
		{"", ""},
		{"/", "/"},
		// Empty segments, a trailing slash, more segments than the
		// split keeps on the stack.
		{"/subscriptions//resourcegroups/rg/", "/subscriptions//resourceGroups/rg/"},
		{"/subscriptions/s/resourceGroups/rg/providers/microsoft.scheduler/jobcollections/jc/JOBS/j/HISTORY/a/b/c/d/e/f/g",
			"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/j/history/a/b/c/d/e/f/g"},
	}
	for _, tt := range tests {
		if got := canonicalPath(tt.in); got != tt.want {
			t.Errorf("canonicalPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitKey(t *testing.T) {
	tests := []struct {
		key  string
		want scope
		ok   bool
	}{
		{"s/rg/jc", scope{"s", "rg", "jc"}, true},
		{"rg/jc", scope{}, false},
		{"jc", scope{}, false},
		{"a/b/c/d", scope{}, false},
	}
	for _, tt := range tests {
		got, ok := splitKey(tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("splitKey(%q) = %+v, %v; want %+v, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

// TestAPIVersionIsQueryGet: apiVersion agrees with url.Values.Get on
// queries its shortcut takes and on those it leaves to the full parse.
func TestAPIVersionIsQueryGet(t *testing.T) {
	for _, q := range []string{"", "api-version=2016-03-01", "api-version=2016-01-01", "api-version=2016-03-01&x=1",
		"x=1&api-version=2016-03-01", "api-version=2016-03-02", "api-version=2016%2D03%2D01", "api-version=2016-03-01;x=1",
		"api-version=2016-03-01&api-version=2016-01-01", "api-version=", "api-version", "Api-Version=2016-03-01", "api-version=2016+03-01"} {
		u := &url.URL{Path: "/", RawQuery: q}
		if got, want := apiVersion(u), u.Query().Get("api-version"); got != want {
			t.Errorf("apiVersion(%q) = %q, want %q", q, got, want)
		}
	}
}
