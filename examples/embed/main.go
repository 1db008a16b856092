// Command embed is an HTTP service that embeds the jobclock scheduler and
// schedules a webhook to itself: a job that POSTs to the service's own
// /webhook every minute, starting now.
//
//	go run ./examples/embed -addr 127.0.0.1:8090
//	curl http://127.0.0.1:8090/jobs/heartbeat          # status
//	curl http://127.0.0.1:8090/jobs/heartbeat/history  # newest first
//	curl -X POST http://127.0.0.1:8090/jobs/heartbeat/run
//
// Ctrl-C stops the scheduler (waiting for an attempt in flight, which
// calls this server), then the HTTP server.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ln, err := net.Listen("tcp", *addr)
	if err == nil {
		err = serve(ctx, ln, logger, nil)
	}
	if err != nil {
		slog.Error("embed", "err", err)
		os.Exit(1)
	}
}

// serve runs the service on ln until ctx ends. started, when not nil, is
// called with the scheduler once the service runs (for tests).
func serve(ctx context.Context, ln net.Listener, logger *slog.Logger, started func(*scheduler.Scheduler)) error {
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: logger})
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhook", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		logger.Info("webhook received", "job", r.Header.Get("x-ms-scheduler-jobid"),
			"expected", r.Header.Get("x-ms-scheduler-expected-execution-time"),
			"tag", r.Header.Get("x-ms-scheduler-execution-tag"), "body", string(body))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /jobs/{name}", func(w http.ResponseWriter, r *http.Request) {
		j, err := s.GetJob(r.Context(), "service", r.PathValue("name"))
		if err != nil {
			httpError(w, err)
			return
		}
		writeJSON(w, j.Definition())
	})
	mux.HandleFunc("GET /jobs/{name}/history", func(w http.ResponseWriter, r *http.Request) {
		h, err := s.ListHistory(r.Context(), "service", r.PathValue("name"), nil)
		if err != nil {
			httpError(w, err)
			return
		}
		writeJSON(w, h)
	})
	mux.HandleFunc("POST /jobs/{name}/run", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.RunJob(r.Context(), "service", r.PathValue("name")); err != nil {
			httpError(w, err)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})

	if _, err := s.PutCollection(ctx, "service", nil, nil); err != nil {
		return err
	}
	job, err := s.ParseJob([]byte(`{
		"action": {
			"type": "Http",
			"request": {"uri": "http://` + ln.Addr().String() + `/webhook", "method": "POST",
				"headers": {"Content-Type": "application/json"}, "body": "{\"hello\": \"from jobclock\"}"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 2}
		},
		"recurrence": {"frequency": "Minute", "interval": 1}
	}`))
	if err != nil {
		return err
	}
	if _, err := s.PutJob(ctx, "service", "heartbeat", job, nil); err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	logger.Info("listening", "addr", ln.Addr().String())
	if started != nil {
		started(s)
	}

	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Stop the scheduler first: an attempt in flight calls this server.
	serr := s.Stop(shutdown)
	return errors.Join(serr, srv.Shutdown(shutdown))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func httpError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, scheduler.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, scheduler.ErrInvalid):
		code = http.StatusBadRequest
	case errors.Is(err, scheduler.ErrFinalState), errors.Is(err, scheduler.ErrConflict):
		code = http.StatusConflict
	}
	http.Error(w, err.Error(), code)
}
