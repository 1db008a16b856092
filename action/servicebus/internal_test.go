package servicebus

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// TestEvictedClientStaysOpenWhileSending checks that a client evicted from
// the cache while a send holds it is closed only when that send releases
// it, against the local Service Bus peer.
func TestEvictedClientStaysOpenWhileSending(t *testing.T) {
	addr, api := os.Getenv("JOBCLOCK_SBPEER_ADDR"), os.Getenv("JOBCLOCK_SBPEER_HTTP")
	if addr == "" || api == "" {
		const msg = `JOBCLOCK_SBPEER_ADDR or JOBCLOCK_SBPEER_HTTP is not set; start the Service Bus peer with: eval "$(scripts/start-sbpeer.sh)"`
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	newKey := func() (string, string) {
		var b [32]byte
		rand.Read(b[:])
		name, key := "policy-"+hex.EncodeToString(b[:4]), base64.StdEncoding.EncodeToString(b[:])
		body, _ := json.Marshal(map[string]string{"name": name, "key": key})
		resp, err := http.Post(api+"/keys", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("register key with the peer: %v", err)
		}
		resp.Body.Close()
		return name, key
	}
	nameA, keyA := newKey()
	nameB, keyB := newKey()
	e := New(&Options{Endpoint: func(string) string { return addr }, UseDevelopmentEmulator: true, MaxClients: 1, Timeout: 10 * time.Second})
	defer func() {
		// Bounded: a failed check may leave A held.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.Close(ctx)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	queue := "held-" + nameA

	a, releaseA, err := e.acquire(addr, nameA, keyA)
	if err != nil {
		t.Fatal(err)
	}
	sender, err := a.sender(queue)
	if err != nil {
		t.Fatal(err)
	}
	if err := sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("before")}, nil); err != nil {
		t.Fatalf("send with A: %v", err)
	}
	// B's client evicts A's from a cache of one while A is held.
	if _, releaseB, err := e.acquire(addr, nameB, keyB); err != nil {
		t.Fatal(err)
	} else {
		releaseB()
	}
	if n := e.clients.Len(); n != 1 {
		t.Errorf("cached clients = %d, want 1", n)
	}
	e.closing.Wait()
	if err := sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("after eviction")}, nil); err != nil {
		t.Fatalf("send with A after its eviction, before its release: %v (closed under its user)", err)
	}
	releaseA()
	e.closing.Wait()
	if err := sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("after release")}, nil); err == nil {
		t.Error("send with A after its eviction and release succeeded; want its client closed")
	}
}
