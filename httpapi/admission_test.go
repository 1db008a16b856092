package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

const admissionColl = "/subscriptions/sub1/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc"

// admissionJob returns the body of a job due in a month.
func admissionJob() string {
	return `{"properties": {"startTime": "` + time.Now().AddDate(0, 1, 0).UTC().Format(time.RFC3339) + `",
	"action": {"type": "Http", "request": {"uri": "http://192.0.2.1/", "method": "GET"}}}}`
}

// admitted returns a handler over a memory store with the given
// admission control and no throttling, and a collection jc to put jobs in.
func admitted(t *testing.T, a *httpapi.Admission) (http.Handler, *scheduler.Scheduler) {
	return admittedOver(t, memory.New(), a)
}

// admittedOver is admitted over st.
func admittedOver(t *testing.T, st scheduler.Store, a *httpapi.Admission) (http.Handler, *scheduler.Scheduler) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := scheduler.New(st, &scheduler.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(s, &httpapi.Options{Logger: log, Admission: a, Throttle: &httpapi.Throttle{Disabled: true}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", admissionColl+"?api-version=2016-03-01",
		strings.NewReader(`{"location": "West Europe", "properties": {"sku": {"name": "P20Premium"}}}`)))
	if rec.Code != http.StatusCreated {
		t.Fatalf("put collection: status %d: %s", rec.Code, rec.Body)
	}
	return h, s
}

// serve runs one request with body on h.
func serve(h http.Handler, method, path string, body io.Reader) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path+"?api-version=2016-03-01", body))
	return rec
}

// TestAdmissionSheds: while the only write slot is taken (by a PUT whose
// body is still arriving), another PUT waits its turn: it is served when
// the slot comes free within Admission.Wait, and answered 429 with
// Retry-After and an ARM error, without being applied, when it does not.
// Reads have slots of their own and are served meanwhile.
func TestAdmissionSheds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, s := admitted(t, &httpapi.Admission{Reads: 1, Writes: 1, Wait: 1500 * time.Millisecond})
		ctx := context.Background()

		// A PUT that holds the write slot until its body is written.
		pr, pw := io.Pipe()
		slowDone := make(chan *httptest.ResponseRecorder)
		go func() { slowDone <- serve(h, "PUT", admissionColl+"/jobs/slow", pr) }()
		synctest.Wait()

		// Shed: the slot stays taken for longer than Wait.
		start := time.Now()
		rec := serve(h, "PUT", admissionColl+"/jobs/shed", strings.NewReader(admissionJob()))
		if rec.Code != http.StatusTooManyRequests {
			t.Fatalf("PUT while the write slot is taken: status %d, want 429: %s", rec.Code, rec.Body)
		}
		if waited := time.Since(start); waited != 1500*time.Millisecond {
			t.Errorf("the shed PUT waited %v, want 1.5s", waited)
		}
		if got := rec.Header().Get("Retry-After"); got != "2" {
			t.Errorf("Retry-After = %q, want \"2\" (the wait in whole seconds, rounded up)", got)
		}
		if d := decodeError(t, rec); d.Code != httpapi.CodeTooManyRequests || !strings.Contains(d.Message, "not applied") {
			t.Errorf("error = %+v, want code TooManyRequests saying the request was not applied", d)
		}

		// A read is served while the write slot is taken.
		if rec := serve(h, "GET", admissionColl, nil); rec.Code != http.StatusOK {
			t.Errorf("GET while the write slot is taken: status %d, want 200", rec.Code)
		}

		// Queued: the slot comes free after 1s, within Wait.
		queuedDone := make(chan *httptest.ResponseRecorder)
		go func() {
			queuedDone <- serve(h, "PUT", admissionColl+"/jobs/queued", strings.NewReader(admissionJob()))
		}()
		time.Sleep(time.Second)
		io.WriteString(pw, admissionJob())
		pw.Close()
		if rec := <-slowDone; rec.Code != http.StatusCreated {
			t.Errorf("slow PUT: status %d, want 201: %s", rec.Code, rec.Body)
		}
		if rec := <-queuedDone; rec.Code != http.StatusCreated {
			t.Errorf("queued PUT: status %d, want 201: %s", rec.Code, rec.Body)
		}

		if _, err := s.GetJob(ctx, "sub1/rg/jc", "shed"); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("GetJob(shed) = %v, want ErrNotFound: a shed PUT must not be applied", err)
		}
		for _, name := range []string{"slow", "queued"} {
			if _, err := s.GetJob(ctx, "sub1/rg/jc", name); err != nil {
				t.Errorf("GetJob(%s): %v", name, err)
			}
		}
	})
}

// slowPuts is a store whose job writes take a millisecond, as a store on
// a disk does, so that concurrent PUTs queue for the write slot however
// fast the machine is.
type slowPuts struct{ scheduler.Store }

func (s slowPuts) PutJob(ctx context.Context, r *scheduler.JobRecord) error {
	time.Sleep(time.Millisecond)
	return s.Store.PutJob(ctx, r)
}

// TestAdmissionKeepsAcceptedWrites hammers the API with PUTs from many
// clients over loopback HTTP, far beyond one write slot with a wait of a
// microsecond: every PUT answered 2xx is stored, and none answered 429 is.
func TestAdmissionKeepsAcceptedWrites(t *testing.T) {
	h, s := admittedOver(t, slowPuts{memory.New()}, &httpapi.Admission{Writes: 1, Wait: time.Microsecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	const clients, puts = 16, 40
	var (
		mu       sync.Mutex
		accepted []string
		shed     []string
		other    []error
		wg       sync.WaitGroup
	)
	ctx := context.Background()
	body := admissionJob()
	for c := range clients {
		wg.Go(func() {
			cl := httpapi.NewClient(srv.URL, &httpapi.ClientOptions{HTTPClient: srv.Client()})
			ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg", Collection: "jc"}
			for i := range puts {
				name := fmt.Sprintf("j-%d-%d", c, i)
				_, _, err := cl.PutJobJSON(ctx, ref, name, []byte(body), nil)
				var re *httpapi.ResponseError
				mu.Lock()
				switch {
				case err == nil:
					accepted = append(accepted, name)
				case errors.As(err, &re) && re.StatusCode == http.StatusTooManyRequests && re.RetryAfter > 0:
					shed = append(shed, name)
				default:
					other = append(other, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, err := range other {
		t.Errorf("PUT: %v (want 2xx, or 429 with Retry-After)", err)
	}
	if len(accepted) == 0 || len(shed) == 0 {
		t.Fatalf("%d PUTs accepted and %d shed; the test needs both", len(accepted), len(shed))
	}
	for _, name := range accepted {
		if _, err := s.GetJob(ctx, "sub1/rg/jc", name); err != nil {
			t.Errorf("accepted job %s: %v", name, err)
		}
	}
	for _, name := range shed {
		if _, err := s.GetJob(ctx, "sub1/rg/jc", name); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("shed job %s: GetJob = %v, want ErrNotFound", name, err)
		}
	}
	t.Logf("%d PUTs accepted, %d shed", len(accepted), len(shed))
}
