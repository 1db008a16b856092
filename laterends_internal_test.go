package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLaterEnds: the entries of outcomes of occurrences side by side that
// a conflicting write left on the job are those that the step's entries
// do not hold, wherever they are in either list.
func TestLaterEnds(t *testing.T) {
	end := func(tag string, retry int, action ActionName) HistoryEntry {
		return HistoryEntry{ExecutionTag: tag, RetryCount: retry, ActionName: action}
	}
	a, b, c := end("a", 0, MainAction), end("b", 0, MainAction), end("c", 0, MainAction)
	passed := HistoryEntry{Status: StatusSkipped}
	for _, tc := range []struct {
		name       string
		ends, hist []HistoryEntry
		want       []HistoryEntry
	}{
		{"after the recorded ones", []HistoryEntry{a, b, c}, []HistoryEntry{a}, []HistoryEntry{b, c}},
		{"after a passed-over entry", []HistoryEntry{a, b}, []HistoryEntry{passed, a}, []HistoryEntry{b}},
		{"the recorded ones gone", []HistoryEntry{b, c}, []HistoryEntry{a}, []HistoryEntry{b, c}},
		{"a retry of a recorded one", []HistoryEntry{a, end("a", 1, MainAction)}, []HistoryEntry{a}, []HistoryEntry{end("a", 1, MainAction)}},
		{"an errorAction of a recorded one", []HistoryEntry{a, end("a", 0, ErrorAction)}, []HistoryEntry{a}, []HistoryEntry{end("a", 0, ErrorAction)}},
		{"none later", []HistoryEntry{a}, []HistoryEntry{a}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &JobRecord{Schedule: JobSchedule{Policy: &PolicyState{Ends: tc.ends}}}
			got := laterEnds(r, tc.hist)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("laterEnds (-want +got):\n%s", diff)
			}
			if r.Schedule.Policy.Ends != nil {
				t.Errorf("Ends left on the record: %+v", r.Schedule.Policy.Ends)
			}
		})
	}
}
