package dashboard_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/sqlite"
)

// go test -run '^$' -bench . -benchtime 20x ./dashboard/
//
// The targets: the collection page with 10,000 jobs and the job
// page with 1,000 history entries render in under 100 ms each, on the
// memory and SQLite stores.

// bigStore is a store with a collection of n jobs (various schedules and
// zones) and a job "busy" with h history entries.
type bigStore struct {
	name  string
	store scheduler.Store
	s     *scheduler.Scheduler
	h     http.Handler
}

func newBigStore(tb testing.TB, kind string, n, h int) *bigStore {
	tb.Helper()
	var st scheduler.Store
	switch kind {
	case "memory":
		st = memory.New()
	case "sqlite":
		s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "bench.db"), nil)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		st = s
	}
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	fill(tb, s, st, n, h)
	return &bigStore{name: kind, store: st, s: s, h: dashboard.New(s, &dashboard.Options{Prefix: "/ui", Logger: slog.New(slog.DiscardHandler)})}
}

// fill puts n jobs into collection "sub/rg/big" and h history entries on
// its job "busy", recorded straight into the store.
func fill(tb testing.TB, s *scheduler.Scheduler, st scheduler.Store, n, h int) {
	tb.Helper()
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "sub/rg/big", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n + 1}}}, nil); err != nil {
		tb.Fatal(err)
	}
	recurrences := []string{
		`{"frequency": "Minute", "interval": 15}`,
		`{"frequency": "Day", "schedule": {"hours": [2], "minutes": [30]}, "timeZone": "Europe/Berlin"}`,
		`{"frequency": "Week", "schedule": {"weekDays": ["Monday", "Wednesday", "Friday"], "hours": [10, 22], "minutes": [0]}, "timeZone": "America/New_York"}`,
		`{"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": -1}], "hours": [5], "minutes": [15]}}`,
	}
	var jobs []*scheduler.Job
	for _, rec := range recurrences {
		j, err := scheduler.ParseJob([]byte(`{"action": {"type": "Https", "request": {"uri": "https://api.example.com/hook?sig=x", "method": "POST"}}, "recurrence": `+rec+`}`), nil)
		if err != nil {
			tb.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	for i := range n - 1 {
		if _, err := s.PutJob(ctx, "sub/rg/big", fmt.Sprintf("job-%05d", i), jobs[i%len(jobs)], nil); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := s.PutJob(ctx, "sub/rg/big", "busy", jobs[0], nil); err != nil {
		tb.Fatal(err)
	}
	claimed, err := st.ClaimDue(ctx, time.Now().Add(time.Hour), "bench", time.Now().Add(2*time.Hour), n)
	if err != nil {
		tb.Fatal(err)
	}
	for _, j := range claimed {
		if j.Name != "busy" {
			if err := st.Record(ctx, "bench", j, nil); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		var hist []scheduler.HistoryEntry
		at := time.Now().Add(-time.Duration(h) * time.Minute)
		for k := range h {
			e := scheduler.HistoryEntry{Collection: j.Collection, Job: j.Name, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
				ExpectedExecutionTime: at, StartTime: at, EndTime: at.Add(200 * time.Millisecond), RepeatCount: k + 1,
				Message: "Http Action - Response from host 'api.example.com': 'OK' Response Headers: Content-Type: application/json\n{\"ok\": true}"}
			if k%10 == 0 {
				e.Status, e.Message = scheduler.StatusFailed, strings.Repeat("HTTP 502 Bad Gateway <html>upstream</html>\n", 40)
			}
			hist = append(hist, e)
			at = at.Add(time.Minute)
		}
		if err := st.Record(ctx, "bench", j, hist); err != nil {
			tb.Fatal(err)
		}
	}
}

func (b *bigStore) get(tb testing.TB, path string) int {
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui"+path, nil))
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET %s: %d\n%s", path, rec.Code, rec.Body)
	}
	return rec.Body.Len()
}

func BenchmarkPages(b *testing.B) {
	for _, kind := range []string{"memory", "sqlite"} {
		big := newBigStore(b, kind, 10_000, 1_000)
		coll := "/collections/" + url.PathEscape("sub/rg/big")
		for _, page := range []struct{ name, path string }{
			{"collection=10000jobs/first", coll},
			{"collection=10000jobs/100-per-page", coll + "?top=100"},
			{"collection=10000jobs/last-page", coll + "?top=100&skip=9900"},
			{"collection=10000jobs/sorted-by-next-run", coll + "?top=100&sort=next"},
			{"collection=10000jobs/sorted-by-next-run-desc-middle", coll + "?top=100&sort=next&order=desc&skip=5000"},
			{"collection=10000jobs/sorted-by-failures", coll + "?top=100&sort=failures"},
			{"collection=10000jobs/faulted-filter", coll + "?state=Faulted"},
			{"job=1000history/first", coll + "/jobs/busy"},
			{"job=1000history/failed-page-2", coll + "/jobs/busy?status=Failed&skip=50"},
			{"overview=10000jobs", "/"},
		} {
			b.Run(kind+"/"+page.name, func(b *testing.B) {
				var n int
				for b.Loop() {
					n = big.get(b, page.path)
				}
				b.ReportMetric(float64(n), "bytes/page")
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
			})
		}
	}
}

// callCounter counts the calls a page makes to the store.
type callCounter struct {
	*memory.Store
	calls atomic.Int64
}

func (c *callCounter) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	c.calls.Add(1)
	return c.Store.GetCollection(ctx, name)
}

func (c *callCounter) ListCollections(ctx context.Context) ([]*scheduler.CollectionRecord, error) {
	c.calls.Add(1)
	return c.Store.ListCollections(ctx)
}

func (c *callCounter) GetJob(ctx context.Context, coll, name string) (*scheduler.JobRecord, error) {
	c.calls.Add(1)
	return c.Store.GetJob(ctx, coll, name)
}

func (c *callCounter) ListJobs(ctx context.Context, coll string, f scheduler.JobFilter) ([]*scheduler.JobRecord, error) {
	c.calls.Add(1)
	return c.Store.ListJobs(ctx, coll, f)
}

func (c *callCounter) ListHistory(ctx context.Context, coll, job string, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	c.calls.Add(1)
	return c.Store.ListHistory(ctx, coll, job, f)
}

func (c *callCounter) CountJobs(ctx context.Context) ([]scheduler.JobCount, error) {
	c.calls.Add(1)
	return c.Store.CountJobs(ctx)
}

func (c *callCounter) CountDue(ctx context.Context, now time.Time) (int, error) {
	c.calls.Add(1)
	return c.Store.CountDue(ctx, now)
}

func (c *callCounter) CountHistory(ctx context.Context, from, to time.Time, step time.Duration, colls []string) ([]scheduler.HistoryCount, error) {
	c.calls.Add(1)
	return c.Store.CountHistory(ctx, from, to, step, colls)
}

func (c *callCounter) RecentHistory(ctx context.Context, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	c.calls.Add(1)
	return c.Store.RecentHistory(ctx, f)
}

// TestStoreCallsPerPage: every page makes the same few store calls however
// many jobs and history entries it shows, a collection's page sorted by
// any column included: the store serves its order.
func TestStoreCallsPerPage(t *testing.T) {
	calls := map[string][]int64{}
	for _, size := range []int{10, 300} {
		st := &callCounter{Store: memory.New()}
		s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		fill(t, s, st, size, size)
		big := &bigStore{store: st, s: s, h: dashboard.New(s, &dashboard.Options{Prefix: "/ui", Logger: slog.New(slog.DiscardHandler)})}
		coll := "/collections/" + url.PathEscape("sub/rg/big")
		for _, path := range []string{"/", coll + "?top=100", coll + "?top=100&sort=last", coll + "?top=100&sort=next&skip=100",
			coll + "?top=100&sort=failures&order=desc", coll + "?top=100&sort=next&state=Enabled", coll + "?top=100&sort=state&order=desc",
			coll + "/jobs/busy", coll + "/jobs/busy?status=Failed"} {
			st.calls.Store(0)
			big.get(t, path)
			calls[path] = append(calls[path], st.calls.Load())
		}
	}
	for path, n := range calls {
		t.Logf("GET %s: %d store calls", path, n[1])
		if n[0] != n[1] || n[1] > 8 {
			t.Errorf("GET %s makes %d store calls with 10 jobs and entries, %d with 300; want the same few", path, n[0], n[1])
		}
	}
}

// BenchmarkSearch searches the 10,000 jobs of the big collection: a
// name most jobs have (the first page reads one store page), the same a
// hundred pages on, and a name none has (every job is read once).
func BenchmarkSearch(b *testing.B) {
	for _, kind := range []string{"memory", "sqlite"} {
		big := newBigStore(b, kind, 10_000, 0)
		for _, page := range []struct{ name, path string }{
			{"many-matches/first", "/search?name=job-"},
			{"many-matches/page-100", "/search?name=job-&skip=4950"},
			{"no-match", "/search?name=nothing-like-it"},
			{"health-failing", "/search?health=Failing"},
		} {
			b.Run(kind+"/"+page.name, func(b *testing.B) {
				for b.Loop() {
					big.get(b, page.path)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
			})
		}
	}
}

// BenchmarkJobPageCalendarExcluded renders the job page of a minutely job
// whose calendar excludes its first weeks (the job skips them, or merges
// them into the next included minute), with the minutes dropped before
// its next occurrence: the page costs the same however many they are.
func BenchmarkJobPageCalendarExcluded(b *testing.B) {
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h := &bigStore{h: dashboard.New(s, &dashboard.Options{Prefix: "/ui", Logger: slog.New(slog.DiscardHandler)})}
	if _, err := s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		b.Fatal(err)
	}
	start := time.Date(time.Now().Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, weeks := range []int{1, 8} {
		for _, on := range []string{"Skip", "NextIncluded"} {
			name := fmt.Sprintf("weeks=%d/%s", weeks, on)
			c, err := scheduler.ParseCalendar([]byte(fmt.Sprintf(`{"properties": {"ranges": [{"start": %q, "end": %q}]}}`,
				start.Format("2006-01-02T15:04:05"), start.AddDate(0, 0, 7*weeks).Format("2006-01-02T15:04:05"))))
			if err != nil {
				b.Fatal(err)
			}
			cal := fmt.Sprintf("weeks%d", weeks)
			if _, err := s.PutCalendar(context.Background(), "c", cal, c, nil); err != nil {
				b.Fatal(err)
			}
			job, err := scheduler.ParseJob([]byte(fmt.Sprintf(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "POST"}},
				"startTime": %q, "recurrence": {"frequency": "Minute", "calendar": %q, "onExcluded": %q}}`, start.Format(time.RFC3339), cal, on)), nil)
			if err != nil {
				b.Fatal(err)
			}
			jobName := strings.NewReplacer("=", "-", "/", "-").Replace(name)
			if _, err := s.PutJob(context.Background(), "c", jobName, job, nil); err != nil {
				b.Fatal(err)
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					h.get(b, "/collections/c/jobs/"+jobName)
				}
				b.ReportMetric(float64(7*24*60*weeks), "dropped-minutes")
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
			})
		}
	}
}

// BenchmarkJobPageStoredCalendarEmptyRules renders the job page of a daily
// job whose calendar, stored by a version that accepted them (written
// straight into the store), holds iCalendar events whose RRULE never
// occurs: 10 of the kind only the probe finds (a minutely rule whose
// BYSETPOS selects nothing) and 10 of a monthly kind.
func BenchmarkJobPageStoredCalendarEmptyRules(b *testing.B) {
	ctx := context.Background()
	st := memory.New()
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	h := &bigStore{h: dashboard.New(s, &dashboard.Options{Prefix: "/ui", Logger: slog.New(slog.DiscardHandler)})}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		b.Fatal(err)
	}
	col, err := st.GetCollection(ctx, "c")
	if err != nil {
		b.Fatal(err)
	}
	col.Definition.Calendars = map[string]*scheduler.CalendarEntry{"cal": {ETag: "stored",
		Calendar: scheduler.Calendar{Properties: scheduler.CalendarProperties{ICal: emptyRulesICal}}}}
	if err := st.PutCollection(ctx, col); err != nil {
		b.Fatal(err)
	}
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "POST"}},
		"recurrence": {"frequency": "Day", "calendar": "cal"}}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		h.get(b, "/collections/c/jobs/j")
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
}

// emptyRulesICal is an iCalendar text of 20 events on the days of
// January 2026 whose RRULE never occurs, as versions that accepted such
// rules stored them, and of events that do occur.
var emptyRulesICal = func() string {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\n")
	for i := range 20 {
		rule := "FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYSETPOS=2"
		if i%2 == 1 {
			rule = "FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2;BYSETPOS=3"
		}
		fmt.Fprintf(&b, "BEGIN:VEVENT\r\nDTSTART:202601%02dT100000Z\r\nDURATION:PT1H\r\nRRULE:%s\r\nEND:VEVENT\r\n", i+1, rule)
	}
	b.WriteString("BEGIN:VEVENT\r\nDTSTART;VALUE=DATE:20260201\r\nRRULE:FREQ=YEARLY;COUNT=50\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	return b.String()
}()

// BenchmarkCollectionWithCalendarByNext: the big collection with an
// exclusion calendar, sorted by next run: each page reads all its jobs
// (see the collection's page in the package documentation), against the
// one store read of a collection without calendars.
func BenchmarkCollectionWithCalendarByNext(b *testing.B) {
	for _, kind := range []string{"memory", "sqlite"} {
		big := newBigStore(b, kind, 10_000, 0)
		c, err := scheduler.ParseCalendar([]byte(`{"properties": {"dates": ["2030-12-25"]}}`))
		if err != nil {
			b.Fatal(err)
		}
		coll := "/collections/" + url.PathEscape("sub/rg/big")
		for _, withCal := range []bool{false, true} {
			name := kind + "/no-calendar"
			if withCal {
				name = kind + "/calendar"
				if _, err := big.s.PutCalendar(context.Background(), "sub/rg/big", "hol", c, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					big.get(b, coll+"?top=100&sort=next&order=desc&skip=5000")
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/page")
			})
		}
	}
}
