// Command mqlab-go-client drives the Apache RocketMQ Go client (rocketmq-client-go/v2) for
// mqlab's interop matrix: the same program runs against a real RocketMQ 4.9.3 broker and
// against `python -m mqlab serve`, and prints one JSON object per line so that the Python
// side can compare what happened.
//
//	mqlab-go-client produce -n 127.0.0.1:9876 -topic T -group G -count 8 -tags TagA,TagB,TagC
//	mqlab-go-client consume -n 127.0.0.1:9876 -topic T -group G -expr "TagA || TagB" -expect 6
//	mqlab-go-client transact -n 127.0.0.1:9876 -topic T -group G -state unknown -check commit
//	mqlab-go-client produce -n 127.0.0.1:9876 -topic T -ak mqlabUser -sk user-secret-1
//
// The producer sends single messages, which this client writes as SEND_MESSAGE (10) with the
// long V1 header names (producer/producer.go), a path the Java client (SEND_MESSAGE_V2) does
// not take. The name server is always given explicitly: the client's default resolver would
// make an HTTP call to look it up.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

var out = json.NewEncoder(os.Stdout)
var outMu sync.Mutex

func emit(v map[string]any) {
	outMu.Lock()
	defer outMu.Unlock()
	_ = out.Encode(v)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mqlab-go-client: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	rlog.SetLogLevel("error")
	if len(os.Args) < 2 {
		fail("usage: mqlab-go-client produce|consume|transact [flags]")
	}
	switch os.Args[1] {
	case "produce":
		produce(os.Args[2:])
	case "consume":
		consume(os.Args[2:])
	case "transact":
		transact(os.Args[2:])
	default:
		fail("unknown command %q (produce, consume, transact)", os.Args[1])
	}
}

// credentialFlags adds -ak and -sk to fs: with both, the client signs every request it sends
// (primitive.Credentials, the Go client's ACL interceptor: AccessKey and an HmacSHA1
// Signature, as the Java client's AclClientRPCHook). It returns them once fs is parsed.
func credentialFlags(fs *flag.FlagSet) func() primitive.Credentials {
	ak := fs.String("ak", "", "ACL access key (with -sk: sign every request)")
	sk := fs.String("sk", "", "ACL secret key")
	return func() primitive.Credentials {
		return primitive.Credentials{AccessKey: *ak, SecretKey: *sk}
	}
}

func produce(args []string) {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	ns := fs.String("n", "", "name server address host:port (required)")
	topic := fs.String("topic", "", "topic (required)")
	group := fs.String("group", "mqlab_go_producer", "producer group")
	count := fs.Int("count", 1, "messages to send")
	tags := fs.String("tags", "", "comma-separated tags, used round-robin (empty: no tag)")
	retries := fs.Int("retry", 2, "retries when sending fails")
	linger := fs.Duration("linger", 0, "stay connected this long after the last send")
	creds := credentialFlags(fs)
	_ = fs.Parse(args)
	if *ns == "" || *topic == "" {
		fail("produce needs -n and -topic")
	}
	opts := []producer.Option{
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{*ns})),
		producer.WithGroupName(*group),
		producer.WithRetry(*retries),
		producer.WithSendMsgTimeout(5 * time.Second),
	}
	if c := creds(); !c.IsEmpty() {
		opts = append(opts, producer.WithCredentials(c))
	}
	p, err := rocketmq.NewProducer(opts...)
	if err != nil {
		fail("new producer: %v", err)
	}
	if err := p.Start(); err != nil {
		fail("start producer: %v", err)
	}
	defer func() { _ = p.Shutdown() }()
	var tagList []string
	if *tags != "" {
		tagList = strings.Split(*tags, ",")
	}
	for i := 0; i < *count; i++ {
		msg := primitive.NewMessage(*topic, []byte(fmt.Sprintf("go-%d", i)))
		if len(tagList) > 0 {
			msg.WithTag(tagList[i%len(tagList)])
		}
		msg.WithKeys([]string{fmt.Sprintf("key-%d", i)})
		res, err := p.SendSync(context.Background(), msg)
		if err != nil {
			emit(map[string]any{"event": "send", "i": i, "error": err.Error()})
			continue
		}
		emit(map[string]any{
			"event": "send", "i": i, "status": res.Status, "msgId": res.MsgID,
			"offsetMsgId": res.OffsetMsgID, "broker": res.MessageQueue.BrokerName,
			"queueId": res.MessageQueue.QueueId, "queueOffset": res.QueueOffset,
		})
	}
	if *linger > 0 {
		emit(map[string]any{"event": "lingering"})
		time.Sleep(*linger)
	}
}

func consume(args []string) {
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	ns := fs.String("n", "", "name server address host:port (required)")
	topic := fs.String("topic", "", "topic (required)")
	group := fs.String("group", "mqlab_go_consumer", "consumer group")
	expr := fs.String("expr", "*", "tag expression, e.g. \"TagA || TagB\"")
	expect := fs.Int("expect", 1, "stop after this many messages (0: run until -timeout)")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	linger := fs.Duration("linger", 0, "stay connected this long after the last expected message")
	creds := credentialFlags(fs)
	_ = fs.Parse(args)
	if *ns == "" || *topic == "" {
		fail("consume needs -n and -topic")
	}
	opts := []consumer.Option{
		consumer.WithNsResolver(primitive.NewPassthroughResolver([]string{*ns})),
		consumer.WithGroupName(*group),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}
	if cr := creds(); !cr.IsEmpty() {
		opts = append(opts, consumer.WithCredentials(cr))
	}
	c, err := rocketmq.NewPushConsumer(opts...)
	if err != nil {
		fail("new consumer: %v", err)
	}
	done := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	n := 0
	selector := consumer.MessageSelector{Type: consumer.TAG, Expression: *expr}
	err = c.Subscribe(*topic, selector, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			emit(map[string]any{
				"event": "consume", "topic": m.Topic, "queueId": m.Queue.QueueId,
				"queueOffset": m.QueueOffset, "tags": m.GetTags(), "keys": m.GetKeys(),
				"body": string(m.Body), "reconsumeTimes": m.ReconsumeTimes,
			})
			mu.Lock()
			n++
			if *expect > 0 && n >= *expect {
				once.Do(func() { close(done) })
			}
			mu.Unlock()
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		fail("subscribe: %v", err)
	}
	if err := c.Start(); err != nil {
		fail("start consumer: %v", err)
	}
	select {
	case <-done:
	case <-time.After(*timeout):
		emit(map[string]any{"event": "timeout", "received": n})
	}
	if *linger > 0 {
		emit(map[string]any{"event": "lingering"})
		time.Sleep(*linger)
	}
	_ = c.Shutdown()
	if n < *expect {
		os.Exit(3)
	}
}

// txListener answers the local transaction with one state and every check-back with another,
// and reports each check-back.
type txListener struct {
	first, check primitive.LocalTransactionState
	mu           sync.Mutex
	checks       int
}

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	emit(map[string]any{"event": "execute", "body": string(m.Body)})
	return l.first
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	l.mu.Lock()
	l.checks++
	l.mu.Unlock()
	emit(map[string]any{
		"event": "check", "topic": m.Topic, "queueId": m.Queue.QueueId, "body": string(m.Body),
		"checkTimes": m.GetProperty("TRANSACTION_CHECK_TIMES"),
		"realTopic":  m.GetProperty("REAL_TOPIC"), "pgroup": m.GetProperty("PGROUP"),
	})
	return l.check
}

func txState(name string) primitive.LocalTransactionState {
	switch name {
	case "commit":
		return primitive.CommitMessageState
	case "rollback":
		return primitive.RollbackMessageState
	case "unknown":
		return primitive.UnkonwnState
	}
	fail("unknown state %q (commit, rollback, unknown)", name)
	return 0
}

// transact sends one message with the transaction producer (NewTransactionProducer): the local
// transaction answers -state, a check-back (CHECK_TRANSACTION_STATE) answers -check. It stays
// connected until -checks check-backs came, or for -wait when none is expected.
func transact(args []string) {
	fs := flag.NewFlagSet("transact", flag.ExitOnError)
	ns := fs.String("n", "", "name server address host:port (required)")
	topic := fs.String("topic", "", "topic (required)")
	group := fs.String("group", "mqlab_go_tx_producer", "producer group")
	state := fs.String("state", "commit", "local transaction state: commit, rollback, unknown")
	check := fs.String("check", "commit", "state answered to a check-back")
	checks := fs.Int("checks", 0, "wait for this many check-backs")
	wait := fs.Duration("wait", time.Second, "then stay connected this long")
	timeout := fs.Duration("timeout", 60*time.Second, "give up waiting for check-backs after this long")
	_ = fs.Parse(args)
	if *ns == "" || *topic == "" {
		fail("transact needs -n and -topic")
	}
	l := &txListener{first: txState(*state), check: txState(*check)}
	p, err := rocketmq.NewTransactionProducer(l,
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{*ns})),
		producer.WithGroupName(*group),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5*time.Second),
	)
	if err != nil {
		fail("new transaction producer: %v", err)
	}
	if err := p.Start(); err != nil {
		fail("start transaction producer: %v", err)
	}
	defer func() { _ = p.Shutdown() }()
	msg := primitive.NewMessage(*topic, []byte("go-tx"))
	msg.WithTag("TagT")
	res, err := p.SendMessageInTransaction(context.Background(), msg)
	if err != nil {
		emit(map[string]any{"event": "send", "error": err.Error()})
		os.Exit(1)
	}
	emit(map[string]any{
		"event": "send", "status": res.Status, "broker": res.MessageQueue.BrokerName,
		"queueId": res.MessageQueue.QueueId, "queueOffset": res.QueueOffset, "state": int(res.State),
	})
	end := time.Now().Add(*timeout)
	for {
		l.mu.Lock()
		n := l.checks
		l.mu.Unlock()
		if n >= *checks || time.Now().After(end) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(*wait)
}
