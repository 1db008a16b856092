//go:build unix

package servicebus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/internal/testproc"
)

// TestPeerGoesAwayMidSend runs a Service Bus peer of its own and takes it
// away while a message is on its way: frozen, then killed, as a crashed
// host would be. The attempt fails with a message naming the namespace,
// within the executor's timeout; once the peer is back on the same port,
// the next attempt succeeds with the executor's cached client, which
// reconnects.
func TestPeerGoesAwayMidSend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the Service Bus peer")
	}
	const keyName, key = "fault-policy", "ZmF1bHQta2V5LWZvci10aGUtdGVzdC0wMTIzNDU2Nzg5"
	proc, addr, api := testproc.ServiceBusPeer(t, keyName, key)
	const timeout = 20 * time.Second
	e := servicebus.New(&servicebus.Options{Endpoint: func(string) string { return addr }, UseDevelopmentEmulator: true, Timeout: timeout})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Close(ctx)
	}()
	ctx := context.Background()
	send := func(text string) (*action.Result, error) {
		return e.Execute(ctx, queueRequest("contoso-sb", "orders", keyName, key, text))
	}
	if _, err := send("before"); err != nil {
		t.Fatalf("send before the fault: %v", err)
	}

	var res *action.Result
	took, err := proc.KillDuringCall(2*timeout, func() (err error) {
		res, err = send("in flight")
		return err
	})
	if err == nil {
		t.Fatal("send to a peer killed mid-send succeeded")
	}
	t.Logf("after %v: %v", took, err)
	if !strings.Contains(err.Error(), "namespace 'contoso-sb'") || !strings.Contains(res.Message, "ServiceBusQueue Action - ") {
		t.Errorf("error = %q, message %q; want the namespace named", err, res.Message)
	}
	if took >= timeout {
		t.Errorf("the failed send took %v, the whole timeout; want it to fail as soon as the peer is gone", took)
	}

	proc.Restart()
	if _, err = send("after"); err != nil {
		t.Fatalf("send after the peer came back: %v", err)
	}
	// The restarted peer has received exactly the message sent after it.
	got := (&sbPeer{addr: addr, http: api}).messages(t, "orders")
	if len(got) != 1 || got[0].Body != "after" {
		t.Errorf("the restarted peer received %+v, want the one message sent after the restart", got)
	}
}
