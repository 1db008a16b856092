package servicebus_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/schedulertest"
)

// TestCheckedWhenPut: a job whose Service Bus message names a namespace,
// queue or topic that Service Bus refuses, or has a field Execute would
// refuse, is refused by PutJobJSON at the paths of those fields, for the
// action and for the error action; a job with good fields is stored.
func TestCheckedWhenPut(t *testing.T) {
	reg := new(action.Registry)
	defer reg.Close(t.Context())
	servicebus.Register(reg, nil)
	s := schedulertest.New(t, &scheduler.Config{Executors: reg})
	auth := `"authentication": {"type": "SharedAccessKey", "sasKeyName": "send", "sasKey": "k3y"}`
	queue := func(namespace, queue string) string {
		return `{"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "` + namespace + `", "queueName": "` + queue + `", ` + auth + `, "message": "hi"}}`
	}
	topic := func(namespace, topic string) string {
		return `{"type": "ServiceBusTopic", "serviceBusTopicMessage": {"namespace": "` + namespace + `", "topicPath": "` + topic + `", ` + auth + `, "message": "hi"}}`
	}
	for _, tt := range []struct {
		name string
		job  string
		want []string // paths
	}{
		{"good queue", `{"action": ` + queue("contoso-sb", "orders") + `}`, nil},
		{"good topic", `{"action": ` + topic("contoso-sb", "events/eu") + `}`, nil},
		{"short namespace", `{"action": ` + queue("ns1", "orders") + `}`, []string{"action.serviceBusQueueMessage.namespace"}},
		{"bad queue", `{"action": ` + queue("contoso-sb", "my queue") + `}`, []string{"action.serviceBusQueueMessage.queueName"}},
		{"bad topic and namespace", `{"action": ` + topic("1contoso", "/events") + `}`,
			[]string{"action.serviceBusTopicMessage.namespace", "action.serviceBusTopicMessage.topicPath"}},
		{"bad queue of the error action", `{"action": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "contoso-sb",
			"queueName": "orders", ` + auth + `, "message": "hi"}, "errorAction": ` + queue("contoso-sb", "bad*queue") + `}}`,
			[]string{"action.errorAction.serviceBusQueueMessage.queueName"}},
		{"session and partition differ", `{"action": {"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "contoso-sb",
			"queueName": "orders", ` + auth + `, "message": "hi", "brokeredMessageProperties": {"sessionId": "s1", "partitionKey": "p1"}}}}`,
			[]string{"action.serviceBusQueueMessage.brokeredMessageProperties.partitionKey"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.PutJobJSON(t.Context(), scheduler.DefaultCollection, "j", []byte(tt.job), nil)
			var got []string
			for _, ve := range scheduler.ValidationErrors(err) {
				got = append(got, ve.Path)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PutJobJSON problems at (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}
