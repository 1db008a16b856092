package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/httpapi"
)

// config describes one load run.
type config struct {
	Clients    int           // concurrent API clients
	Jobs       int           // one-time jobs that fire
	Rate       int           // jobs that come due per second
	Binary     string        // the jobclock command; empty builds it
	Postgres   string        // PostgreSQL DSN; empty uses a SQLite file
	Grace      time.Duration // how long after the last due time to wait for stragglers
	SetupConns int           // concurrent writers that put the jobs
	Log        io.Writer     // serve's log; nil discards it
	ServeArgs  []string      // more flags for serve
}

// perCollection is the job limit of the P20Premium plan.
const perCollection = scheduler.P20PremiumMaxJobCount

const subscription = "load"

// report is what a run measured.
type report struct {
	Jobs, Clients, Rate int
	Store               string
	Setup               time.Duration // putting the jobs that fire

	Ops    map[string]*opStats // API operations during the firing window
	Window time.Duration       // how long the API clients ran

	Received   int           // jobs whose request arrived
	Lost       int           // jobs whose request never arrived
	Repeated   int           // extra deliveries with the same execution tag
	Duplicated int           // extra deliveries with another execution tag
	LateP50    time.Duration // arrival minus the job's startTime
	LateP99    time.Duration
	LateMax    time.Duration
}

// opStats collects one API operation's latencies and failures.
type opStats struct {
	lat       []time.Duration
	server    int // 5xx answers
	throttled int // 429 answers
	other     int // other failures (4xx, transport)
	firstErr  error
}

func (o *opStats) add(d time.Duration, err error) {
	o.lat = append(o.lat, d)
	if err == nil {
		return
	}
	var re *httpapi.ResponseError
	switch {
	case errors.As(err, &re) && re.StatusCode >= 500:
		o.server++
	case errors.As(err, &re) && re.StatusCode == http.StatusTooManyRequests:
		o.throttled++
	default:
		o.other++
	}
	if o.firstErr == nil {
		o.firstErr = err
	}
}

func (o *opStats) merge(p *opStats) {
	o.lat = append(o.lat, p.lat...)
	o.server += p.server
	o.throttled += p.throttled
	o.other += p.other
	if o.firstErr == nil {
		o.firstErr = p.firstErr
	}
}

// quantile returns the q-quantile of d, which it sorts.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(math.Ceil(q*float64(len(d)))) - 1
	return d[max(i, 0)]
}

// delivery is one request the receiver got.
type delivery struct {
	tag string
	at  time.Time
}

// receiver is the HTTP endpoint the jobs call; it remembers every
// delivery by job path.
type receiver struct {
	mu  sync.Mutex
	got map[string][]delivery
	n   int
	all chan struct{} // closed when want jobs have had a delivery
	// want is the number of distinct jobs expected.
	want int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	io.Copy(io.Discard, r.Body)
	rc.mu.Lock()
	first := len(rc.got[r.URL.Path]) == 0
	rc.got[r.URL.Path] = append(rc.got[r.URL.Path], delivery{tag: r.Header.Get("x-ms-scheduler-execution-tag"), at: now})
	if first {
		rc.n++
		if rc.n == rc.want {
			close(rc.all)
		}
	}
	rc.mu.Unlock()
}

// run starts jobclock serve, puts cfg.Jobs one-time jobs due at cfg.Rate
// per second, and drives the API with cfg.Clients clients while they
// fire.
func run(ctx context.Context, cfg config) (*report, error) {
	dir, err := os.MkdirTemp("", "jobclock-load-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := cfg.Binary
	if bin == "" {
		bin = filepath.Join(dir, "jobclock")
		// Built in its own module (cmd/jobclock), with that module's
		// dependencies.
		root, err := exec.CommandContext(ctx, "go", "list", "-f", "{{.Dir}}", "github.com/jobclock/scheduler").Output()
		if err != nil {
			return nil, fmt.Errorf("find the jobclock module: %w", err)
		}
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
		build.Dir = filepath.Join(strings.TrimSpace(string(root)), "cmd", "jobclock")
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build jobclock: %v\n%s", err, out)
		}
	}

	// Every client and setup writer has its own token, so that each has
	// the default request budget of its own, as separate callers do.
	tokens := make([]string, cfg.Clients+cfg.SetupConns)
	var tf strings.Builder
	for i := range tokens {
		b := make([]byte, 16)
		rand.Read(b)
		tokens[i] = hex.EncodeToString(b)
		fmt.Fprintf(&tf, "%s %s\n", tokens[i], subscription)
	}
	tokenFile := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokenFile, []byte(tf.String()), 0o600); err != nil {
		return nil, err
	}

	recv := &receiver{got: make(map[string][]delivery), want: cfg.Jobs, all: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rs := &http.Server{Handler: recv}
	go rs.Serve(ln)
	defer rs.Close()

	args := []string{"serve", "-addr", "127.0.0.1:0", "-tokens", tokenFile}
	store := "SQLite (synchronous=FULL)"
	if cfg.Postgres != "" {
		args = append(args, "-postgres", cfg.Postgres, "-schema", "load_"+tokens[0][:8])
		store = "PostgreSQL"
	} else {
		args = append(args, "-db", filepath.Join(dir, "jobclock.db"))
	}
	args = append(args, cfg.ServeArgs...)
	addr, stop, err := startServe(ctx, bin, args, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer stop()
	base := "http://" + addr
	client := func(i int) *httpapi.Client {
		return httpapi.NewClient(base, &httpapi.ClientOptions{Token: tokens[i], HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	}
	rep := &report{Jobs: cfg.Jobs, Clients: cfg.Clients, Rate: cfg.Rate, Store: store, Ops: map[string]*opStats{}}

	// Collections: fire-K hold the jobs that fire; api-N take the
	// clients' puts (due in a year, so they never fire).
	fireColls := (cfg.Jobs + perCollection - 1) / perCollection
	premium := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP20Premium}}}
	ref := func(name string) httpapi.CollectionRef {
		return httpapi.CollectionRef{Subscription: subscription, ResourceGroup: "rg", Collection: name}
	}
	c0 := client(cfg.Clients)
	for k := range fireColls {
		if _, _, err := c0.PutCollection(ctx, ref(fmt.Sprintf("fire-%d", k)), premium, nil); err != nil {
			return nil, fmt.Errorf("put collection: %w", err)
		}
	}
	for i := range cfg.Clients {
		if _, _, err := c0.PutCollection(ctx, ref(fmt.Sprintf("api-%d", i)), premium, nil); err != nil {
			return nil, fmt.Errorf("put collection: %w", err)
		}
	}

	// The first job is due once the setup had time to put them all (at
	// an assumed 400 puts per second), at least 3 s from now.
	setupStart := time.Now()
	t0 := setupStart.Add(max(3*time.Second, time.Duration(cfg.Jobs)*time.Second/400)).Truncate(time.Second).Add(time.Second)
	due := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second / time.Duration(cfg.Rate)) }
	jobRef := func(i int) (httpapi.CollectionRef, string) {
		return ref(fmt.Sprintf("fire-%d", i/perCollection)), fmt.Sprintf("job-%d", i)
	}
	expected := make(map[string]time.Time, cfg.Jobs)
	for i := range cfg.Jobs {
		r, name := jobRef(i)
		expected["/"+r.Collection+"/"+name] = due(i)
	}
	recvURL := "http://" + ln.Addr().String()
	var (
		next    = make(chan int)
		setupMu sync.Mutex
		setupE  error
		wg      sync.WaitGroup
	)
	for w := range cfg.SetupConns {
		c := client(cfg.Clients + w)
		wg.Go(func() {
			for i := range next {
				r, name := jobRef(i)
				start := due(i)
				def := &scheduler.Job{StartTime: &start, Action: oneShot(recvURL + "/" + r.Collection + "/" + name)}
				if err := putShed(ctx, c, r, name, def); err != nil {
					setupMu.Lock()
					setupE = cmpErr(setupE, fmt.Errorf("put %s/%s: %w", r.Collection, name, err))
					setupMu.Unlock()
				}
			}
		})
	}
	for i := range cfg.Jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	rep.Setup = time.Since(setupStart)
	if setupE != nil {
		return nil, setupE
	}
	if time.Now().After(t0) {
		fmt.Fprintf(os.Stderr, "load: the setup ran %s past the first due time; early jobs start late\n", time.Since(t0).Round(time.Millisecond))
	}

	// The API load runs from the first due time until every job has
	// fired or the grace period after the last due time has passed.
	time.Sleep(time.Until(t0))
	last := due(cfg.Jobs - 1)
	deadline := last.Add(cfg.Grace)
	loadCtx, stopLoad := context.WithCancel(ctx)
	perClient := make([]map[string]*opStats, cfg.Clients)
	for i := range cfg.Clients {
		stats := map[string]*opStats{"put": {}, "get": {}, "list": {}, "history": {}}
		perClient[i] = stats
		c := client(i)
		own := ref(fmt.Sprintf("api-%d", i))
		rng := mrand.New(mrand.NewPCG(uint64(i), 7))
		wg.Go(func() {
			far := time.Now().AddDate(1, 0, 0).Truncate(time.Second)
			for n := 0; loadCtx.Err() == nil; n++ {
				fired := rng.IntN(cfg.Jobs)
				fr, fname := jobRef(fired)
				start := time.Now()
				var err error
				op := ""
				switch p := rng.IntN(100); {
				case p < 25:
					op = "put"
					// A start of its own, so that every put writes (a put of
					// the definition a job has writes nothing).
					at := far.Add(time.Duration(n) * time.Second)
					_, _, err = c.PutJob(loadCtx, own, fmt.Sprintf("j-%d", n%200), &scheduler.Job{StartTime: &at, Action: oneShot(recvURL + "/never")}, nil)
				case p < 60:
					op = "get"
					_, err = c.GetJob(loadCtx, fr, fname)
				case p < 80:
					op = "list"
					_, err = c.ListJobs(loadCtx, fr, &httpapi.ListOptions{Top: 100, Skip: rng.IntN(perCollection/100) * 100})
				default:
					op = "history"
					_, err = c.ListHistory(loadCtx, fr, fname, nil)
				}
				if loadCtx.Err() != nil {
					return // cut off by the end of the run: not measured
				}
				stats[op].add(time.Since(start), err)
				// A shed request asks the client to come back later,
				// which a client of ARM does.
				waitShed(loadCtx, err)
			}
		})
	}
	select {
	case <-recv.all:
	case <-time.After(time.Until(deadline)):
	case <-ctx.Done():
	}
	stopLoad()
	rep.Window = time.Since(t0)
	wg.Wait()
	for _, stats := range perClient {
		for op, s := range stats {
			if rep.Ops[op] == nil {
				rep.Ops[op] = &opStats{}
			}
			rep.Ops[op].merge(s)
		}
	}

	// Deliveries against the jobs put.
	recv.mu.Lock()
	defer recv.mu.Unlock()
	var late []time.Duration
	for path, want := range expected {
		got := recv.got[path]
		if len(got) == 0 {
			rep.Lost++
			continue
		}
		rep.Received++
		late = append(late, got[0].at.Sub(want))
		for _, d := range got[1:] {
			if d.tag == got[0].tag {
				rep.Repeated++
			} else {
				rep.Duplicated++
			}
		}
	}
	rep.LateP50, rep.LateP99 = quantile(late, 0.5), quantile(late, 0.99)
	if len(late) > 0 {
		rep.LateMax = late[len(late)-1]
	}
	return rep, nil
}

// putShed puts a job, and puts it again after the Retry-After of each
// 429 answer (a shed request is not applied).
func putShed(ctx context.Context, c *httpapi.Client, r httpapi.CollectionRef, name string, def *scheduler.Job) error {
	for {
		_, _, err := c.PutJob(ctx, r, name, def, nil)
		if !waitShed(ctx, err) {
			return err
		}
	}
}

// waitShed waits the Retry-After of err when it is a 429 answer with one,
// and reports whether it did (and ctx did not end meanwhile).
func waitShed(ctx context.Context, err error) bool {
	var re *httpapi.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusTooManyRequests || re.RetryAfter <= 0 {
		return false
	}
	select {
	case <-time.After(re.RetryAfter):
		return true
	case <-ctx.Done():
		return false
	}
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

// oneShot is an action that posts to uri once, without retries.
func oneShot(uri string) action.Action {
	var a action.Action
	def := fmt.Sprintf(`{"type": "Http", "request": {"uri": %q, "method": "POST", "body": "load"}, "retryPolicy": {"retryType": "None"}}`, uri)
	if err := json.Unmarshal([]byte(def), &a); err != nil {
		panic(err)
	}
	return a
}

// startServe runs the jobclock command with args and returns the address
// it listens on, and a function that stops it.
func startServe(ctx context.Context, bin string, args []string, log io.Writer) (string, func(), error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	if log == nil {
		log = io.Discard
	}
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "jobclock: listening on http://"); ok {
			go io.Copy(io.Discard, out)
			return rest, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("jobclock serve exited before it listened (%v)", sc.Err())
}

// print writes r as a table.
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "jobclock serve on %s: %d one-time jobs due at %d/s, %d API clients (one token each, default budgets)\n",
		r.Store, r.Jobs, r.Rate, r.Clients)
	fmt.Fprintf(w, "setup: %d jobs put in %s\n", r.Jobs, r.Setup.Round(time.Millisecond))
	fmt.Fprintf(w, "%-8s %8s %8s %10s %10s %10s %6s %6s %6s\n", "op", "requests", "per s", "p50", "p99", "max", "5xx", "429", "other")
	total := 0
	for _, op := range []string{"put", "get", "list", "history"} {
		s := r.Ops[op]
		if s == nil {
			continue
		}
		n := len(s.lat)
		if n == 0 {
			continue
		}
		total += n
		p50, p99 := quantile(s.lat, 0.5), quantile(s.lat, 0.99)
		fmt.Fprintf(w, "%-8s %8d %8.0f %10s %10s %10s %6d %6d %6d\n", op, n, r.perSecond(n), ms(p50), ms(p99), ms(s.lat[n-1]), s.server, s.throttled, s.other)
		if s.firstErr != nil {
			fmt.Fprintf(w, "         first error: %v\n", s.firstErr)
		}
	}
	fmt.Fprintf(w, "%-8s %8d %8.0f   (over %s, answers of every status)\n", "all", total, r.perSecond(total), r.Window.Round(time.Millisecond))
	fmt.Fprintf(w, "occurrences: %d received, %d lost, %d repeated with the same tag, %d duplicated with another tag\n",
		r.Received, r.Lost, r.Repeated, r.Duplicated)
	fmt.Fprintf(w, "start lateness (arrival at the receiver minus startTime): p50 %s, p99 %s, max %s\n", ms(r.LateP50), ms(r.LateP99), ms(r.LateMax))
}

// perSecond returns n requests as a rate over the run's window.
func (r *report) perSecond(n int) float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(n) / r.Window.Seconds()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// serverErrors returns the 5xx answers of every operation.
func (r *report) serverErrors() int {
	n := 0
	for _, s := range r.Ops {
		n += s.server
	}
	return n
}
