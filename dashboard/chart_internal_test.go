package dashboard

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestDurationChartErrorAction: the duration chart counts the attempts of
// the errorAction apart from the job's own, whatever their outcome, so a
// faulted occurrence whose errorAction succeeded adds no Completed; and
// over a span of seconds its axis labels show seconds, each one once.
func TestDurationChartErrorAction(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 5, 30, 0, 0, time.UTC)
	entry := func(at time.Duration, status scheduler.ExecutionStatus, name scheduler.ActionName, faulted bool) scheduler.HistoryEntry {
		start := t0.Add(at)
		return scheduler.HistoryEntry{ActionName: name, Status: status, StartTime: start, EndTime: start.Add(200 * time.Millisecond), Faulted: faulted}
	}
	// Newest first, as history lists them: an occurrence that completed,
	// then one whose two attempts failed and whose errorAction completed.
	ch := buildDurationChart([]scheduler.HistoryEntry{
		entry(20*time.Second, scheduler.StatusCompleted, scheduler.MainAction, false),
		entry(12*time.Second, scheduler.StatusCompleted, scheduler.ErrorAction, false),
		entry(10*time.Second, scheduler.StatusFailed, scheduler.MainAction, true),
		entry(0, scheduler.StatusFailed, scheduler.MainAction, false),
	})
	if ch == nil {
		t.Fatal("no chart for four attempts")
	}
	want := []statusCount{{"Completed", 1}, {"Failed", 2}, {"errorAction attempt", 1}}
	if diff := cmp.Diff(want, ch.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(ch.SVG), `class="dots dot-ErrorAction"`) {
		t.Errorf("the errorAction's attempt has no dot of its own:\n%s", ch.SVG)
	}
	var labels []string
	for _, m := range regexp.MustCompile(`<text class="axis" x="[^"]*" y="[^"]*">([^<]*)</text>`).FindAllStringSubmatch(string(ch.SVG), -1) {
		labels = append(labels, m[1])
	}
	if diff := cmp.Diff([]string{"05:30:00", "05:30:06", "05:30:13", "05:30:20"}, labels); diff != "" {
		t.Errorf("time axis labels (-want +got):\n%s", diff)
	}
}
