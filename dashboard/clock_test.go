package dashboard_test

import (
	"strconv"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestClockColumns: a column of instants reads alike: when one of them
// has seconds, an instant on a whole minute shows ":00" too; a column
// of whole minutes shows none.
func TestClockColumns(t *testing.T) {
	day := strconv.Itoa(time.Now().Year()+1) + "-06-01" // less than 18 months ahead
	e := newEnv(t, envOptions{})
	col, err := scheduler.ParseCollection([]byte(`{"location": "West Europe", "properties": {"sku": {"name": "P20Premium"}, "quota": {"maxRecurrence": {"frequency": "Second", "interval": 1}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e.collection("sub/rg/c", col)
	e.collection("sub/rg/minutes", nil)
	e.job("sub/rg/c", "on-the-minute", "/ok", `"startTime": "`+day+`T10:00:00Z"`)
	e.job("sub/rg/c", "ten-past", "/ok", `"startTime": "`+day+`T10:00:10Z"`)
	e.job("sub/rg/c", "half-minutes", "/ok", `"startTime": "`+day+`T10:00:00Z", "recurrence": {"frequency": "Second", "interval": 30}`)
	e.job("sub/rg/minutes", "a", "/ok", `"startTime": "`+day+`T10:00:00Z"`)
	e.job("sub/rg/minutes", "b", "/ok", `"startTime": "`+day+`T10:05:00Z"`)

	p := e.get(collPath("sub/rg/c"))
	wantIn(t, "collection page", p, day+" 10:00:00 UTC", day+" 10:00:10 UTC")
	wantNotIn(t, "collection page", p, day+" 10:00 UTC")
	wantIn(t, "search", e.get("/search?q=t"), day+" 10:00:00 UTC", day+" 10:00:10 UTC")

	p = e.get(jobPath("sub/rg/c", "half-minutes"))
	wantIn(t, "upcoming occurrences", p, day+" 10:00:00 UTC", day+" 10:00:30 UTC", day+" 10:01:00 UTC")
	wantNotIn(t, "upcoming occurrences", p, day+" 10:01 UTC")

	p = e.get(collPath("sub/rg/minutes"))
	wantIn(t, "a column of whole minutes", p, day+" 10:00 UTC", day+" 10:05 UTC")
	wantNotIn(t, "a column of whole minutes", p, "10:00:00 UTC")
}
