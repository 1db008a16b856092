package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/postgres"
)

const serveUsage = `usage: jobclock serve [flags]

Runs a scheduler with the management REST API (the Azure Scheduler ARM API,
api-version 2016-03-01) on -addr. Jobs and history are kept in a SQLite file
(-db, default jobclock.db) or a PostgreSQL database (-postgres DSN, tables in
-schema). Several serve processes may share one PostgreSQL schema, or
one SQLite file on one host (not over a network file system), whose
writes take turns; they take over the jobs of one that dies within
-lease. Jobs that only a Go program embedding the scheduler can run (a
ScheduleFunc function, a type of its own registry) fail each attempt that
serve claims: keep them out of the database serve uses. serve warns at
start of the Enabled ones it finds in the collection "default", where
ScheduleFunc and Schedule put them (it reads at most 1,000 of its jobs);
it does not look in the other collections, which would read every job.

Callers authenticate with a bearer token from -tokens FILE, or from the
JOBCLOCK_API_TOKENS environment variable when -tokens is not given: one
"TOKEN SUBSCRIPTION[,SUBSCRIPTION...]" entry per line (or separated by ';'),
"*" for every subscription. A third field, "read-only", makes a token one
that may only read: the API answers its requests with any method but GET
and HEAD with 403, and the dashboard shows it nothing that changes anything.
Without tokens the API is open to anyone who can connect, so serve then
refuses any -addr that is not a loopback address.

With -tls-cert and -tls-key (PEM files) serve speaks HTTPS (TLS 1.2 or
later). The files are checked for changes every -tls-reload-interval and
loaded again on SIGHUP, without a restart; a new pair that does not load
(a key that does not match, a half-written file) leaves the previous
certificate in use, and the log says why. Bearer tokens sent over plain
HTTP can be read by anyone on the path, so with tokens serve refuses a
non-loopback -addr without TLS, unless -allow-plaintext-tokens says that
a proxy in front terminates TLS.

Each caller (a token, or the remote address without one) may make
-throttle-reads reads and -throttle-writes writes per -throttle-window,
refilled evenly; beyond that the API answers 429 with Retry-After. Every
response reports the remaining budget in the headers
x-ms-ratelimit-remaining-subscription-reads or -writes. -no-throttle
turns this off.

So that REST API load does not make jobs late, at most -api-reads read
and -api-writes write operations of the REST API are served at once,
across all callers; the others wait their turn in order of arrival, up to
-api-wait, and are then answered 429 with Retry-After, not applied.
-no-api-limit serves every operation at once. The dashboard's pages are
not counted. The scheduler's own store work does not queue behind
the API either: SQLite takes its writes first, and PostgreSQL runs it on
-engine-conns connections of its own.

The web dashboard is at /ui/ (a browser that opens / is sent there). With
tokens, people sign in to it with one and see the subscriptions it
reaches; the sign-in lasts 12 hours, or until serve restarts unless
JOBCLOCK_SESSION_KEY holds a session key (64 hex digits or more) shared by
the processes behind one address. Each request of a session checks its
token again (the cookie holds it sealed with the session key: keep the
key as secret as the tokens), so a session ends once its token is no
longer in the tokens file serve was started with. Signing out ends the
session in the process that served it; the list of signed-out sessions
is kept in memory (the last 100,000: beyond them the oldest is
forgotten, and a copy of its cookie works again), so with JOBCLOCK_SESSION_KEY a copy of a signed-out
session's cookie is accepted again after a restart, and by the other
processes, until it expires or its token is removed. A new key ends
every session.

Failed authentications are budgeted, the dashboard's sign-ins and the
API's requests together (a guess at one counts at the other): each client
address (an IPv6 client's /64 network) may fail -signin-failures times
per -signin-window, refilled evenly; beyond that the sign-in form and the
API answer that address 429 with Retry-After without checking the token,
a valid one included, until its budget refills. A request without an
Authorization header and a sign-in with an empty token count for nothing
(a browser asking /favicon.ico, a health check). All addresses together
may fail -signin-failures-overall times per -signin-window; beyond that
requests wait their turn, in order of arrival, and each is checked when
the budget has room for one more failure, right and wrong tokens alike,
so guessing from many addresses slows to that rate; a request that would
wait more than -signin-wait is answered 429, a valid token from a new
address too while guesses keep the line full. An address from which a
request authenticated in the last day (kept in memory) does not wait:
its failures take from a second budget of -signin-failures-overall, and
only once that is used up do its requests wait in the line as well.
-no-signin-limit turns all of this off.

The budgets, and the log, know a client by the address of the connection.
Behind a reverse proxy that is the proxy's, so every client would share
one budget: -trusted-proxies names the proxies (addresses or CIDR
networks, comma-separated) whose X-Forwarded-For header serve believes. A
request from one of them is taken to come from the rightmost address of
X-Forwarded-For that is not itself a trusted proxy. The header of any
other peer is ignored, since a client can write what it likes in it; by
default no proxy is trusted.

Timeouts: request headers must arrive within 10s and the whole request
within 30s; a response must be written within 60s; each request's work is
bounded by 30s; idle keep-alive connections close after 120s. Request bodies
are limited to 64 KiB.

On SIGINT or SIGTERM serve claims no more jobs and waits for the jobs'
attempts in flight, at most -shutdown-timeout; attempts still running
then are cancelled, and serve waits for their outcomes (a failed attempt,
retried as any failure) to be stored, at most -lease more. Meanwhile the
listeners stay open, so that a load balancer sees the shutdown: /readyz
answers 503 "not ready: shutting down" at once, on -addr and on
-metrics-addr; the API and the dashboard go on serving reads (GET and
HEAD: jobs, history, collections, the dashboard's pages), and answer
every other request 503 with Retry-After: 5, Connection: close and a
message saying that the server is shutting down (a write already being
served finishes); /healthz and /metrics go on answering 200, so the drain
can be watched. Once the attempts have ended the listeners close
(requests still in flight get what is left of -shutdown-timeout), and
serve closes the store and exits; a read that arrives between the end of
the attempts and the close is answered 503 with Retry-After too.

A second SIGINT or SIGTERM during the drain forces the exit: the attempts
still running are cancelled at once, serve waits for their outcomes (a
failed attempt, retried as any failure) to be stored, at most -lease,
closes the connections and the store, logs that the exit was forced, and
exits 1.

The log (on stderr; -log-format json for one JSON object per line) has a
WARN line for each faulted occurrence and each failed attempt of an
errorAction, with the collection, the job, the occurrence's execution_tag
and the message; -v adds an INFO line for every attempt.

` + keyUsage + `
` + observeUsage + `
Exit status: 0 after a clean shutdown; 1 when the address cannot be
listened on (checked first: no database nor key file is created then), the
store cannot be opened, the server fails, the shutdown timeout passes
first, or a second signal forces the exit; 2 on a usage error (a flag, or a -tokens, -tls-cert
or -tls-key file that cannot be used).

Flags:
`

// Timeouts of the HTTP server of serve.
const (
	serveReadHeaderTimeout = 10 * time.Second
	serveReadTimeout       = 30 * time.Second
	serveWriteTimeout      = 60 * time.Second
	serveIdleTimeout       = 120 * time.Second
	serveHandlerTimeout    = 30 * time.Second
)

// serveCmd is "jobclock serve": it returns the exit status.
func serveCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:8080", "`host:port` to listen on (port 0 picks a free port)")
	dbPath := fs.String("db", "jobclock.db", "SQLite database `file`, created when missing")
	dsn := fs.String("postgres", "", "PostgreSQL connection string (`DSN`) to use instead of SQLite")
	schema := fs.String("schema", postgres.DefaultSchema, "PostgreSQL `schema` for the tables, created when missing (with -postgres)")
	engineConns := fs.Int("engine-conns", postgres.DefaultEngineConns, "PostgreSQL connections reserved for the scheduler's claims and records, apart from the API's (with -postgres)")
	tokens := fs.String("tokens", "", "bearer token `file` (default: the JOBCLOCK_API_TOKENS environment variable)")
	minRetry := fs.Duration("min-retry-interval", 0, "smallest retryInterval jobs may use (default 15s; lower it for tests)")
	shutdown := fs.Duration("shutdown-timeout", 30*time.Second, "how long a shutdown waits for requests and attempts in flight")
	keys := addKeyFlags(fs)
	lease := addLeaseFlag(fs)
	ahead := addClaimAheadFlag(fs)
	window := addFiringWindowFlag(fs)
	tlsFlags := addTLSFlags(fs)
	throttleFlags := addThrottleFlags(fs)
	admissionFlags := addAdmissionFlags(fs)
	signInFlags := addSignInFlags(fs)
	proxies := addTrustedProxiesFlag(fs)
	observe := addObserveFlags(fs)
	logs := addLogFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "jobclock serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if flagGiven(fs, "db") && *dsn != "" {
		fmt.Fprintln(stderr, "jobclock serve: -db and -postgres cannot be used together")
		return 2
	}
	if flagGiven(fs, "schema") && *dsn == "" {
		fmt.Fprintln(stderr, "jobclock serve: -schema needs -postgres")
		return 2
	}
	switch {
	case flagGiven(fs, "engine-conns") && *dsn == "":
		fmt.Fprintln(stderr, "jobclock serve: -engine-conns needs -postgres")
		return 2
	case *engineConns < 1:
		fmt.Fprintln(stderr, "jobclock serve: -engine-conns must be at least 1")
		return 2
	}
	if *minRetry < 0 {
		fmt.Fprintln(stderr, "jobclock serve: -min-retry-interval is negative")
		return 2
	}
	if err := checkLease(*lease); err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	claimAhead, err := ahead.config(*lease)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	firingWindow, err := window.config(claimAhead)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	if err := tlsFlags.check(); err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	throttle, err := throttleFlags.options()
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	admission, err := admissionFlags.options()
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	signIns, err := signInFlags.options()
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	ta, err := httpapi.LoadTokenAuth(*tokens)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: -tokens: %v\n", err)
		return 2
	}
	var auth httpapi.Authenticator
	if ta != nil {
		auth = ta
	}
	if err := observe.check(); err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	if err := logs.check(); err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	if auth == nil && !serveLoopback(*addr) {
		fmt.Fprintf(stderr, "jobclock serve: refusing to serve on %s without authentication: give -tokens FILE or set %s, or use a loopback address such as 127.0.0.1:8080\n", *addr, httpapi.TokensEnv)
		return 2
	}
	if why := tlsFlags.refusePlaintext(*addr, auth != nil); why != "" {
		fmt.Fprintf(stderr, "jobclock serve: %s\n", why)
		return 2
	}

	log := logs.logger(stderr)
	var certs *certReloader
	if tlsFlags.enabled() {
		if certs, err = newCertReloader(tlsFlags.cert, tlsFlags.key, log); err != nil {
			fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
			return 2
		}
	}
	// The first SIGINT or SIGTERM starts the drain, a second one forces
	// the exit.
	ctx, again, stop := notifyShutdown()
	defer stop()

	// The listener first: an address in use ends serve before it
	// creates a database or a key file.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 1
	}
	defer ln.Close() // after Serve returns, which closes it: an error ignored
	keyDB := *dbPath
	if *dsn != "" {
		keyDB = ""
	}
	ring, err := keys.keyring(keyDB, log)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 1
	}
	if ring == nil {
		log.Warn("no secrets key: jobs with secrets are refused; give -key-file or set " + keyEnv)
	}
	store, closeStore, err := openStore(ctx, storeSpec{dbPath: *dbPath, dsn: *dsn, schema: *schema, engineConns: *engineConns, log: log})
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 1
	}
	defer closeStore()
	if *dsn != "" {
		if err := keys.checkStore(ctx, store, ring); err != nil {
			fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
			return 1
		}
	}
	reg := executors(scheduler.DefaultActionTimeout)
	defer reg.Close(context.Background()) // after Stop
	instance := (&scheduler.Config{}).WithDefaults().InstanceID
	obs, err := setupObservability(ctx, observe, instance, log)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 1
	}
	defer shutdownObservability(obs, log)
	s, err := scheduler.New(store, &scheduler.Config{Logger: log, MinRetryInterval: *minRetry, Executors: reg, Secrets: ring,
		InstanceID: instance, LeaseDuration: *lease, ClaimAhead: claimAhead, FiringWindow: firingWindow, Observer: obs.Observer, OnHistory: logs.onHistory(log)})
	if err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	if err := s.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 1
	}
	warnForeignJobs(ctx, s, log)
	failures := httpapi.NewAuthFailures(signIns)
	api := httpapi.New(s, &httpapi.Options{Authenticator: auth, Logger: log, HandlerTimeout: serveHandlerTimeout, Throttle: throttle,
		Admission: admission, AuthFailures: failures, Observer: obs.Observer})
	handler, err := withDashboard(api, s, auth, failures, log)
	if err != nil {
		s.Stop(context.Background())
		fmt.Fprintf(stderr, "jobclock serve: %v\n", err)
		return 2
	}
	shutting := new(drain)
	srv := &http.Server{
		Handler:           proxies.wrap(withHealth(handler, s, shutting)),
		ReadHeaderTimeout: serveReadHeaderTimeout,
		ReadTimeout:       serveReadTimeout,
		WriteTimeout:      serveWriteTimeout,
		IdleTimeout:       serveIdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if auth == nil {
		log.Warn("serving without authentication: loopback only; give -tokens FILE or set " + httpapi.TokensEnv + " to require bearer tokens")
	}
	scheme := "http"
	if certs != nil {
		scheme = "https"
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}
		certs.start(ctx, tlsFlags.reloadInterval)
	}
	fmt.Fprintf(stdout, "jobclock: listening on %s://%s\n", scheme, ln.Addr())
	fmt.Fprintf(stdout, "jobclock: dashboard at %s://%s%s/\n", scheme, ln.Addr(), dashboardPrefix)
	stopMetrics, err := serveMetrics(observe, obs, s, shutting, stdout, log)
	if err != nil {
		log.Error("metrics", "err", err)
		s.Stop(context.Background())
		return 1
	}
	served := make(chan error, 1)
	go func() {
		if certs != nil {
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()

	status := 0
	select {
	case <-ctx.Done():
	case err := <-served:
		log.Error("server failed", "err", err)
		status = 1
	}
	// /readyz answers 503 from now on, and the API and the dashboard 503
	// with Retry-After, while /healthz and /metrics go on answering; the
	// listeners close once the scheduler has stopped.
	shutting.start()
	srv.SetKeepAlivesEnabled(false)
	log.Info("shutting down: not ready; waiting for the attempts in flight", "timeout", shutdown.String())
	sctx, cancel := context.WithTimeout(context.Background(), *shutdown)
	defer cancel()
	// A second signal cuts the drain short: Stop cancels the attempts in
	// flight and waits (at most -lease) for their outcomes to be stored,
	// the connections close at once, and the store is closed as after
	// any shutdown.
	var forced atomic.Bool
	go func() {
		select {
		case sig := <-again:
			forced.Store(true)
			n, _ := s.InFlight()
			log.Error("second signal: forcing the exit; the attempts in flight are cancelled and their outcomes stored as failures before the store closes",
				"signal", sig.String(), "in_flight", n, "wait", lease.String())
			cancel()
		case <-sctx.Done():
		}
	}()
	if err := s.Stop(sctx); err != nil && !(forced.Load() && errors.Is(err, context.Canceled)) {
		log.Error("scheduler stop", "err", err) // a forced exit says so below
		status = 1
	}
	if forced.Load() {
		srv.Close() // the requests in flight too
		stopMetrics(sctx)
		log.Error("exiting before the drain ended: forced by a second signal")
		return 1
	}
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("http shutdown", "err", err)
		status = 1
	}
	if err := stopMetrics(sctx); err != nil {
		log.Error("metrics shutdown", "err", err)
	}
	return status
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// serveLoopback reports whether addr listens only on a loopback address.
func serveLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
