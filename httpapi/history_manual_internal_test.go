package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestHistoryResourceManual: an entry of a run asked for with RunJob says
// "manual": true in its properties; a scheduled one leaves it out.
func TestHistoryResourceManual(t *testing.T) {
	sc := scope{sub: "sub1", rg: "rg1", jc: "jc1"}
	for _, manual := range []bool{true, false} {
		e := scheduler.HistoryEntry{Collection: "sub1/rg1/jc1", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
			StartTime: time.Unix(1e9, 0).UTC(), EndTime: time.Unix(1e9+1, 0).UTC(), RepeatCount: 1, Manual: manual}
		b, err := json.Marshal(newHistoryPrefix(sc, "j").resource(&e))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), `"manual":true`); got != manual {
			t.Errorf("entry with Manual %v: JSON %s", manual, b)
		}
	}
}
