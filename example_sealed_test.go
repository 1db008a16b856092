package scheduler_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/secrets"
	"github.com/jobclock/scheduler/store/memory"
)

// At start, a host checks that its keyring opens every secret in the
// store: SealedKeys names the keys they are sealed with.
func ExampleSealedKeys() {
	ctx := context.Background()
	st := memory.New()
	old, _ := secrets.NewKey(bytes.Repeat([]byte{1}, secrets.KeySize))
	ring, _ := secrets.NewKeyring(old)
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler), Secrets: ring})
	if err != nil {
		panic(err)
	}
	s.PutCollection(ctx, "c", nil, nil)
	job, err := scheduler.ParseJob([]byte(`{"state": "Disabled", "action": {"type": "Https",
		"request": {"uri": "https://example.com/", "method": "GET",
			"authentication": {"type": "Basic", "username": "u", "password": "pw"}}}}`), nil)
	if err != nil {
		panic(err)
	}
	if _, err := s.PutJob(ctx, "c", "report", job, nil); err != nil {
		panic(err)
	}

	// Later, with another key only:
	current, _ := secrets.NewKey(bytes.Repeat([]byte{2}, secrets.KeySize))
	keyring, _ := secrets.NewKeyring(current)
	sealed, err := scheduler.SealedKeys(ctx, st)
	if err != nil {
		panic(err)
	}
	for _, k := range sealed {
		if !slices.Contains(keyring.IDs(), k.ID) {
			fmt.Printf("key %s is missing: %d job, the first %s/%s at %s\n", k.ID, k.Jobs, k.First.Collection, k.First.Name, k.Path)
		}
	}
	// Output:
	// key 458ba8db38962f2f is missing: 1 job, the first c/report at action.request.authentication.password
}
