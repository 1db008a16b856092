package servicebus_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action/servicebus"
)

// sbPeer is the local AMQP peer (testenv/node/sbpeer.js) the tests run
// against.
type sbPeer struct {
	addr string // host:port of the AMQP listener
	http string // base URL of its HTTP API
}

// peer returns the peer named by JOBCLOCK_SBPEER_ADDR and JOBCLOCK_SBPEER_HTTP
// (set by scripts/start-sbpeer.sh). Without them the test is skipped, or
// fails when CI=true.
func peer(tb testing.TB) *sbPeer {
	tb.Helper()
	addr, api := os.Getenv("JOBCLOCK_SBPEER_ADDR"), os.Getenv("JOBCLOCK_SBPEER_HTTP")
	if addr == "" || api == "" {
		const msg = `JOBCLOCK_SBPEER_ADDR or JOBCLOCK_SBPEER_HTTP is not set; start the Service Bus peer with: eval "$(scripts/start-sbpeer.sh)"`
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return &sbPeer{addr: addr, http: api}
}

// options are executor options that reach the peer for every namespace.
func (p *sbPeer) options() *servicebus.Options {
	return &servicebus.Options{
		Endpoint:               func(string) string { return p.addr },
		UseDevelopmentEmulator: true,
		Timeout:                10 * time.Second,
	}
}

// newKey registers a shared access key under a fresh name and returns the
// name and key. Each test uses its own key name, so the peer's per-key
// connection counts belong to that test alone.
func (p *sbPeer) newKey(tb testing.TB) (name, key string) {
	tb.Helper()
	name = "policy-" + randHex(4)
	var k [32]byte
	_, _ = rand.Read(k[:])
	key = base64.StdEncoding.EncodeToString(k[:])
	body, _ := json.Marshal(map[string]string{"name": name, "key": key})
	resp, err := http.Post(p.http+"/keys", "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("register key with the peer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("register key with the peer: %s", resp.Status)
	}
	return name, key
}

// received is one message as the peer recorded it.
type received struct {
	Address                  string            `json:"address"`
	MessageID                string            `json:"message_id"`
	CorrelationID            string            `json:"correlation_id"`
	ContentType              string            `json:"content_type"`
	Subject                  string            `json:"subject"`
	To                       string            `json:"to"`
	ReplyTo                  string            `json:"reply_to"`
	GroupID                  string            `json:"group_id"`
	ReplyToGroupID           string            `json:"reply_to_group_id"`
	TTL                      *int64            `json:"ttl"`
	ApplicationProperties    map[string]any    `json:"application_properties"`
	ApplicationPropertyTypes map[string]string `json:"application_property_types"`
	MessageAnnotations       map[string]any    `json:"message_annotations"`
	Body                     string            `json:"body"`
	BodySection              string            `json:"body_section"`
}

// messages returns what the peer received on address.
func (p *sbPeer) messages(tb testing.TB, address string) []received {
	tb.Helper()
	var out []received
	p.get(tb, "/messages?address="+address, &out)
	return out
}

type peerStats struct {
	ConnectionsOpen   int            `json:"connections_open"`
	ConnectionsOpened int            `json:"connections_opened"`
	ConnectionsByKey  map[string]int `json:"connections_by_key"`
	Attaches          map[string]int `json:"attaches"`
	CPUMicros         int64          `json:"cpu_us"` // processor time the peer has used
}

func (p *sbPeer) stats(tb testing.TB) peerStats {
	tb.Helper()
	var s peerStats
	p.get(tb, "/stats", &s)
	return s
}

func (p *sbPeer) get(tb testing.TB, path string, v any) {
	tb.Helper()
	resp, err := http.Get(p.http + path)
	if err != nil {
		tb.Fatalf("peer GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		tb.Fatalf("peer GET %s: %v", path, err)
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
