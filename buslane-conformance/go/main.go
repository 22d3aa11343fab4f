// Buslane conformance check with the official Go SDK, azservicebus and its admin package (pinned in go.mod and
// go.sum), run by GoSdkConformanceTest:
//
//	BUSLANE_CONNECTION_STRING='Endpoint=sb://localhost:5672;...;UseDevelopmentEmulator=true;' \
//	  [BUSLANE_TAG=plain] [BUSLANE_ADMIN=1] [SSL_CERT_FILE=ca.crt] go run .
//
// With the emulator's connection string the SDK speaks plain AMQP to the given port; with a normal one it speaks
// AMQPS to 5671 (the certificate checked against SSL_CERT_FILE). BUSLANE_ADMIN=1 adds the administration client
// (HTTPS to 443 of the connection string's host). Entities (declared by the Java test) end with -TAG: go-queue,
// go-sessions (RequiresSession), go-schedule, go-deadletter, go-defer, go-lock (LockDuration PT5S), go-rad, and
// the topic go-topic with subscriptions "all" and "red" (SQL filter color = 'red'). Every check runs even if an
// earlier one failed; the exit code is 0 only if all passed.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
)

var tag = envOr("BUSLANE_TAG", "plain")

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func q(name string) string { return name + "-" + tag }

func check(cond bool, format string, args ...any) {
	if !cond {
		panic(fmt.Sprintf(format, args...))
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func ok(err error) {
	if err != nil {
		panic(err)
	}
}

func bodies(ms []*azservicebus.ReceivedMessage) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, string(m.Body))
	}
	return out
}

// receive gathers up to n messages within wait.
func receive(r interface {
	ReceiveMessages(context.Context, int, *azservicebus.ReceiveMessagesOptions) ([]*azservicebus.ReceivedMessage, error)
}, n int, wait time.Duration) []*azservicebus.ReceivedMessage {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	got := []*azservicebus.ReceivedMessage{}
	for len(got) < n {
		batch, err := r.ReceiveMessages(ctx, n-len(got), nil)
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return append(got, batch...)
		}
		ok(err)
		got = append(got, batch...)
	}
	return got
}

func sendReceiveBatchAndPeekLock(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-queue"), nil))
	defer s.Close(ctx)
	r := must(c.NewReceiverForQueue(q("go-queue"), nil))
	defer r.Close(ctx)
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("one"), ApplicationProperties: map[string]any{"n": int64(7)},
		Subject: to.Ptr("greeting"), ContentType: to.Ptr("text/plain"), CorrelationID: to.Ptr("corr-1")}, nil))
	batch := must(s.NewMessageBatch(ctx, nil))
	for i := 0; i < 3; i++ {
		ok(batch.AddMessage(&azservicebus.Message{Body: []byte(fmt.Sprintf("batch-%d", i))}, nil))
	}
	ok(s.SendMessageBatch(ctx, batch, nil))
	got := receive(r, 4, 10*time.Second)
	check(reflect.DeepEqual(bodies(got), []string{"one", "batch-0", "batch-1", "batch-2"}), "bodies %v", bodies(got))
	first := got[0]
	check(first.ApplicationProperties["n"] == int64(7), "application properties %v", first.ApplicationProperties)
	check(*first.Subject == "greeting" && *first.ContentType == "text/plain" && *first.CorrelationID == "corr-1",
		"system properties")
	// this SDK counts deliveries from 1 (the header's delivery-count + 1)
	check(first.DeliveryCount == 1, "delivery count %d", first.DeliveryCount)
	check(*first.SequenceNumber > 0 && first.EnqueuedTime != nil, "sequence number and enqueued time")
	check(first.LockedUntil.After(time.Now()), "locked until %v", first.LockedUntil)
	for _, m := range got {
		ok(r.CompleteMessage(ctx, m, nil)) // this SDK settles over the receiving link
	}
	// (a second complete of one message never reaches the broker here: go-amqp returns at once for a delivery
	// it settled)
	check(len(receive(r, 1, time.Second)) == 0, "nothing left after completing")
}

// batchSizeFromTheLink: on a large-message entity (100 MB messages) the batch is bounded by the link's
// com.microsoft:max-message-batch-size (1 MB), not by its max-message-size.
func batchSizeFromTheLink(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-large"), nil))
	defer s.Close(ctx)
	batch := must(s.NewMessageBatch(ctx, nil))
	fitted := 0
	for i := 0; i < 5; i++ {
		if err := batch.AddMessage(&azservicebus.Message{Body: make([]byte, 300*1024)}, nil); err != nil {
			check(errors.Is(err, azservicebus.ErrMessageTooLarge), "adding to the batch: %v", err)
			break
		}
		fitted++
	}
	check(fitted == 3, "%d messages of 300 KB fitted a batch; a 1 MB batch takes 3", fitted)
	ok(s.SendMessageBatch(ctx, batch, nil))
	r := must(c.NewReceiverForQueue(q("go-large"), &azservicebus.ReceiverOptions{
		ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete}))
	defer r.Close(ctx)
	check(len(receive(r, 3, 10*time.Second)) == 3, "the batch's three messages")
}

func abandonAndRenewLock(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-lock"), nil))
	defer s.Close(ctx)
	r := must(c.NewReceiverForQueue(q("go-lock"), nil))
	defer r.Close(ctx)
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("again")}, nil))
	m := receive(r, 1, 10*time.Second)[0]
	before := *m.LockedUntil
	time.Sleep(time.Second)
	ok(r.RenewMessageLock(ctx, m, nil))
	check(m.LockedUntil.After(before), "renewed %v after %v", m.LockedUntil, before)
	ok(r.AbandonMessage(ctx, m, nil))
	again := receive(r, 1, 10*time.Second)[0]
	check(string(again.Body) == "again" && again.DeliveryCount == 2, "delivery count %d", again.DeliveryCount)
	ok(r.CompleteMessage(ctx, again, nil))
}

func deferAndReceiveDeferred(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-defer"), nil))
	defer s.Close(ctx)
	r := must(c.NewReceiverForQueue(q("go-defer"), nil))
	defer r.Close(ctx)
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("later")}, nil))
	m := receive(r, 1, 10*time.Second)[0]
	seq := *m.SequenceNumber
	ok(r.DeferMessage(ctx, m, nil))
	check(len(receive(r, 1, time.Second)) == 0, "a deferred message is not received again")
	peeked := must(r.PeekMessages(ctx, 5, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &seq}))
	check(len(peeked) == 1 && peeked[0].State == azservicebus.MessageStateDeferred, "peeked %v", bodies(peeked))
	deferred := must(r.ReceiveDeferredMessages(ctx, []int64{seq}, nil))
	check(len(deferred) == 1 && string(deferred[0].Body) == "later", "deferred %v", bodies(deferred))
	ok(r.CompleteMessage(ctx, deferred[0], nil))
}

func deadLetter(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-deadletter"), nil))
	defer s.Close(ctx)
	r := must(c.NewReceiverForQueue(q("go-deadletter"), nil))
	defer r.Close(ctx)
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("bad")}, nil))
	m := receive(r, 1, 10*time.Second)[0]
	ok(r.DeadLetterMessage(ctx, m, &azservicebus.DeadLetterOptions{Reason: to.Ptr("broken"),
		ErrorDescription: to.Ptr("cannot parse")}))
	dlq := must(c.NewReceiverForQueue(q("go-deadletter"), &azservicebus.ReceiverOptions{
		SubQueue: azservicebus.SubQueueDeadLetter}))
	defer dlq.Close(ctx)
	got := receive(dlq, 1, 10*time.Second)
	check(reflect.DeepEqual(bodies(got), []string{"bad"}), "dead-lettered %v", bodies(got))
	check(*got[0].DeadLetterReason == "broken" && *got[0].DeadLetterErrorDescription == "cannot parse",
		"reason %v", got[0].DeadLetterReason)
	ok(dlq.CompleteMessage(ctx, got[0], nil))
}

func receiveAndDelete(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-rad"), nil))
	defer s.Close(ctx)
	r := must(c.NewReceiverForQueue(q("go-rad"), &azservicebus.ReceiverOptions{
		ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete}))
	defer r.Close(ctx)
	for i := 0; i < 3; i++ {
		ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte(fmt.Sprintf("rad-%d", i))}, nil))
	}
	got := receive(r, 3, 10*time.Second)
	check(reflect.DeepEqual(bodies(got), []string{"rad-0", "rad-1", "rad-2"}), "received %v", bodies(got))
	check(len(must(r.PeekMessages(ctx, 5, nil))) == 0, "received and deleted")
}

func scheduleAndCancel(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-schedule"), nil))
	defer s.Close(ctx)
	r := must(c.NewReceiverForQueue(q("go-schedule"), nil))
	defer r.Close(ctx)
	now := time.Now()
	must(s.ScheduleMessages(ctx, []*azservicebus.Message{{Body: []byte("soon")}}, now.Add(2*time.Second), nil))
	later := must(s.ScheduleMessages(ctx, []*azservicebus.Message{{Body: []byte("later")}}, now.Add(10*time.Minute), nil))
	peeked := must(r.PeekMessages(ctx, 5, nil))
	check(reflect.DeepEqual(bodies(peeked), []string{"soon", "later"}), "peeked %v", bodies(peeked))
	check(peeked[1].State == azservicebus.MessageStateScheduled && *peeked[1].SequenceNumber == later[0],
		"the scheduled message's state and number")
	ok(s.CancelScheduledMessages(ctx, later, nil))
	got := receive(r, 1, 15*time.Second)
	check(reflect.DeepEqual(bodies(got), []string{"soon"}), "received %v", bodies(got))
	check(!got[0].EnqueuedTime.Before(now.Add(time.Second)), "enqueued %v, scheduled from %v", got[0].EnqueuedTime, now)
	ok(r.CompleteMessage(ctx, got[0], nil))
	check(len(receive(r, 1, time.Second)) == 0, "the cancelled message never comes")
}

func sessions(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-sessions"), nil))
	defer s.Close(ctx)
	for i := 0; i < 3; i++ {
		ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte(fmt.Sprintf("a-%d", i)), SessionID: to.Ptr("s1")}, nil))
	}
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("b-0"), SessionID: to.Ptr("s2")}, nil))
	// no filter: the sessions with active messages or state
	check(reflect.DeepEqual(listSessions(ctx, c, nil), []string{"s1", "s2"}), "listed %v", listSessions(ctx, c, nil))
	beforeState := time.Now().Add(-time.Second)
	r := must(c.AcceptSessionForQueue(ctx, q("go-sessions"), "s1", nil))
	got := receive(r, 3, 10*time.Second)
	check(reflect.DeepEqual(bodies(got), []string{"a-0", "a-1", "a-2"}), "session s1 %v", bodies(got))
	ok(r.SetSessionState(ctx, []byte("state-s1"), nil))
	check(string(must(r.GetSessionState(ctx, nil))) == "state-s1", "session state")
	before := r.LockedUntil()
	time.Sleep(time.Second)
	ok(r.RenewSessionLock(ctx, nil))
	check(r.LockedUntil().After(before), "session lock renewed")
	for _, m := range got {
		ok(r.CompleteMessage(ctx, m, nil))
	}
	ok(r.Close(ctx))
	next := must(c.AcceptNextSessionForQueue(ctx, q("go-sessions"), nil))
	check(next.SessionID() == "s2", "next session %s", next.SessionID())
	got = receive(next, 1, 10*time.Second)
	check(reflect.DeepEqual(bodies(got), []string{"b-0"}), "session s2 %v", bodies(got))
	ok(next.CompleteMessage(ctx, got[0], nil))
	ok(next.Close(ctx))
	// every message completed: s1 is listed for its state; with a cutoff, the sessions whose state changed since
	check(reflect.DeepEqual(listSessions(ctx, c, nil), []string{"s1"}), "listed %v", listSessions(ctx, c, nil))
	check(reflect.DeepEqual(listSessions(ctx, c, &beforeState), []string{"s1"}), "listed since the state")
	later := time.Now().Add(time.Minute)
	check(len(listSessions(ctx, c, &later)) == 0, "none changed after a minute from now")
	again := must(c.AcceptSessionForQueue(ctx, q("go-sessions"), "s1", nil))
	check(string(must(again.GetSessionState(ctx, nil))) == "state-s1", "the session state was kept")
	ok(again.SetSessionState(ctx, nil, nil)) // nil clears the state (go-amqp sends an empty binary)
	check(must(again.GetSessionState(ctx, nil)) == nil, "the session state cleared")
	ok(again.Close(ctx))
	check(len(listSessions(ctx, c, nil)) == 0, "no messages, no state: not listed")
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	none, err := c.AcceptNextSessionForQueue(short, q("go-sessions"), nil)
	check(err != nil, "a session was accepted though none has messages: %v", none)
}

func listSessions(ctx context.Context, c *azservicebus.Client, updatedAfter *time.Time) []string {
	out := []string{}
	pager := c.NewListSessionsForQueuePager(q("go-sessions"), &azservicebus.ListSessionsOptions{
		SessionStateUpdatedAfter: updatedAfter})
	for pager.More() {
		out = append(out, must(pager.NextPage(ctx)).Sessions...)
	}
	sort.Strings(out)
	return out
}

func topicWithSQLRule(ctx context.Context, c *azservicebus.Client) {
	s := must(c.NewSender(q("go-topic"), nil))
	defer s.Close(ctx)
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("red-1"), ApplicationProperties: map[string]any{"color": "red"}}, nil))
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("blue-1"), ApplicationProperties: map[string]any{"color": "blue"}}, nil))
	all := must(c.NewReceiverForSubscription(q("go-topic"), "all", nil))
	defer all.Close(ctx)
	got := bodies(receive(all, 2, 10*time.Second))
	sort.Strings(got)
	check(reflect.DeepEqual(got, []string{"blue-1", "red-1"}), "all %v", got)
	red := must(c.NewReceiverForSubscription(q("go-topic"), "red", &azservicebus.ReceiverOptions{
		ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete}))
	defer red.Close(ctx)
	reds := receive(red, 2, 3*time.Second)
	check(reflect.DeepEqual(bodies(reds), []string{"red-1"}), "red %v", bodies(reds))
}

func administration(ctx context.Context, cs string) {
	a := must(admin.NewClientFromConnectionString(cs, nil))
	name := "go-admin-" + tag
	created := must(a.CreateQueue(ctx, name, &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		MaxDeliveryCount: to.Ptr(int32(7)), LockDuration: to.Ptr("PT45S")}}))
	check(*created.MaxDeliveryCount == 7 && *created.LockDuration == "PT45S", "created %+v", created.QueueProperties)
	c := must(azservicebus.NewClientFromConnectionString(cs, nil))
	s := must(c.NewSender(name, nil))
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil))
	ok(s.SendMessage(ctx, &azservicebus.Message{Body: []byte("y")}, nil))
	ok(s.Close(ctx))
	ok(c.Close(ctx))
	runtime := must(a.GetQueueRuntimeProperties(ctx, name, nil))
	check(runtime.ActiveMessageCount == 2 && runtime.TotalMessageCount == 2, "runtime %+v", runtime)
	check(listedQueues(ctx, a)[name], "%s listed", name)
	topic := "go-admin-topic-" + tag
	must(a.CreateTopic(ctx, topic, nil))
	must(a.CreateSubscription(ctx, topic, "sub", nil))
	must(a.CreateRule(ctx, topic, "sub", &admin.CreateRuleOptions{Name: to.Ptr("only-red"),
		Filter: &admin.SQLFilter{Expression: "color = 'red'"}}))
	must(a.CreateRule(ctx, topic, "sub", &admin.CreateRuleOptions{Name: to.Ptr("by-id"),
		Filter: &admin.CorrelationFilter{CorrelationID: to.Ptr("c1")}}))
	rules := []string{}
	pager := a.NewListRulesPager(topic, "sub", nil)
	for pager.More() {
		for _, r := range must(pager.NextPage(ctx)).Rules {
			rules = append(rules, r.Name)
		}
	}
	sort.Strings(rules)
	check(reflect.DeepEqual(rules, []string{"$Default", "by-id", "only-red"}), "rules %v", rules)
	topicRuntime := must(a.GetTopicRuntimeProperties(ctx, topic, nil))
	check(topicRuntime.SubscriptionCount == 1, "subscription count")
	// api-version 2024-05, this client's default: the filter counts, $Default counted as SQL
	check(topicRuntime.SQLFilterCount == 2 && topicRuntime.CorrelationFilterCount == 1, "filter counts %d and %d",
		topicRuntime.SQLFilterCount, topicRuntime.CorrelationFilterCount)
	must(a.DeleteTopic(ctx, topic, nil))
	must(a.DeleteQueue(ctx, name, nil))
	check(!listedQueues(ctx, a)[name], "%s deleted", name)
}

func listedQueues(ctx context.Context, a *admin.Client) map[string]bool {
	out := map[string]bool{}
	pager := a.NewListQueuesPager(nil)
	for pager.More() {
		for _, item := range must(pager.NextPage(ctx)).Queues {
			out[item.QueueName] = true
		}
	}
	return out
}

func run(name string, f func()) (passed bool) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Printf("FAIL %s (%s): %v\n", name, tag, r)
			passed = false
		}
	}()
	f()
	fmt.Printf("PASS %s (%s)\n", name, tag)
	return true
}

func main() {
	cs := os.Getenv("BUSLANE_CONNECTION_STRING")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	c, err := azservicebus.NewClientFromConnectionString(cs, nil)
	if err != nil {
		fmt.Println("FAIL: no client:", err)
		os.Exit(2)
	}
	failed := 0
	checks := []struct {
		name string
		f    func(context.Context, *azservicebus.Client)
	}{
		{"sendReceiveBatchAndPeekLock", sendReceiveBatchAndPeekLock},
		{"abandonAndRenewLock", abandonAndRenewLock},
		{"batchSizeFromTheLink", batchSizeFromTheLink},
		{"deferAndReceiveDeferred", deferAndReceiveDeferred},
		{"deadLetter", deadLetter},
		{"receiveAndDelete", receiveAndDelete},
		{"scheduleAndCancel", scheduleAndCancel},
		{"sessions", sessions},
		{"topicWithSQLRule", topicWithSQLRule},
	}
	for _, ch := range checks {
		if !run(ch.name, func() { ch.f(ctx, c) }) {
			failed++
		}
	}
	if os.Getenv("BUSLANE_ADMIN") == "1" && !run("administration", func() { administration(ctx, cs) }) {
		failed++
	}
	_ = c.Close(ctx)
	if failed > 0 {
		fmt.Printf("%d of the checks failed (%s)\n", failed, strings.ToUpper(tag))
		os.Exit(1)
	}
}
