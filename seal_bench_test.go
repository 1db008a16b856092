package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/testcert"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// BenchmarkSealedAttempt measures what sealing costs an attempt: one-time
// Https jobs with Basic authentication run through the engine on the
// memory store, with an executor that only checks the password it gets,
// once with the secrets sealed (a keyring: each attempt opens the password
// with AES-256-GCM) and once unsealed (the memory store without a key).
// Each iteration runs a batch of each, the order alternating;
// sealed/plain is the ratio of their times per attempt.
func BenchmarkSealedAttempt(b *testing.B) {
	const batch = 2000
	k, _, err := secrets.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	ring, _ := secrets.NewKeyring(k)
	total := map[string]time.Duration{}
	round := 0
	for b.Loop() {
		kinds := []string{"plain", "sealed"}
		if round%2 == 1 {
			kinds[0], kinds[1] = kinds[1], kinds[0]
		}
		for _, kind := range kinds {
			var keys *secrets.Keyring
			if kind == "sealed" {
				keys = ring
			}
			total[kind] += sealedBatch(b, keys, batch)
		}
		round++
	}
	for _, kind := range []string{"plain", "sealed"} {
		b.ReportMetric(float64(total[kind].Nanoseconds())/float64(round*batch), kind+"-ns/attempt")
	}
	b.ReportMetric(float64(total["sealed"])/float64(total["plain"]), "sealed/plain")
}

func sealedBatch(b *testing.B, keys *secrets.Keyring, n int) time.Duration {
	ctx := context.Background()
	reg := new(action.Registry)
	reg.Register(action.HTTPS, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		if req.Action.Request.Authentication.Password != "hunter2" {
			return nil, fmt.Errorf("password %q", req.Action.Request.Authentication.Password)
		}
		return nil, nil
	}))
	var recorded, failed atomic.Int64
	done := make(chan struct{})
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Secrets: keys, Logger: slog.New(slog.DiscardHandler),
		OnHistory: func(h scheduler.HistoryEntry) {
			if h.Status != scheduler.StatusCompleted {
				failed.Add(1)
			}
			if recorded.Add(1) == int64(n) {
				close(done)
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	col := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n}}}
	if _, err := s.PutCollection(ctx, "c", col, nil); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		job := &scheduler.Job{Action: action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: "https://example.com/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthBasic, Username: "u", Password: "hunter2"}}}}
		if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d", i), job, nil); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	<-done
	elapsed := time.Since(start)
	if err := s.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d attempts failed", f)
	}
	return elapsed
}

// BenchmarkPutCertificate puts jobs with a client certificate (its pfx
// and password given in clear) into the memory store with a keyring, as
// a Go value, replacing 1,000 jobs in turn: what checking, describing and
// sealing a certificate costs a put. The certificates are 256 different
// ones, taken in turn, so that no put finds its certificate read by the
// put before.
func BenchmarkPutCertificate(b *testing.B) {
	s := sealingScheduler(b)
	ctx := context.Background()
	col := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 1000}}}
	if _, err := s.PutCollection(ctx, "c", col, nil); err != nil {
		b.Fatal(err)
	}
	pfxs := make([]string, 256)
	for i := range pfxs {
		pfxs[i], _ = testcert.Pfx(b, fmt.Sprintf("bench-%d", i), "pfx-pw")
	}
	far := time.Now().Add(24 * time.Hour)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		job := &scheduler.Job{StartTime: &far, Action: action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: "https://example.com/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthClientCertificate, Pfx: pfxs[i%len(pfxs)], Password: "pfx-pw"}}}}
		if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d", i%1000), job, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPatchSealed patches jobs whose Basic password is sealed (the
// memory store with a keyring), each patch changing the request's method
// and keeping the password: what a patch that keeps a sealed secret
// costs, its opening, check and sealing again included.
func BenchmarkPatchSealed(b *testing.B) {
	s := sealingScheduler(b)
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		b.Fatal(err)
	}
	far := time.Now().Add(24 * time.Hour)
	const jobs = 50
	for i := range jobs {
		job := &scheduler.Job{StartTime: &far, Action: action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: "https://example.com/", Method: "GET",
			Authentication: &action.Authentication{Type: action.AuthBasic, Username: "u", Password: "hunter2"}}}}
		if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d", i), job, nil); err != nil {
			b.Fatal(err)
		}
	}
	patches := [][]byte{[]byte(`{"action": {"request": {"method": "POST"}}}`), []byte(`{"action": {"request": {"method": "GET"}}}`)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.PatchJob(ctx, "c", fmt.Sprintf("j%d", i%jobs), patches[i/jobs%2], nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// sealingScheduler returns a Scheduler over a memory store with a
// keyring of a new key, so that it seals the secrets it is given.
func sealingScheduler(b *testing.B) *scheduler.Scheduler {
	b.Helper()
	k, _, err := secrets.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	ring, _ := secrets.NewKeyring(k)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Secrets: ring, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
