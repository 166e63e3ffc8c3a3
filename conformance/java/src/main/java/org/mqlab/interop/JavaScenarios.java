package org.mqlab.interop;

import com.alibaba.fastjson.JSON;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.ConsumeOrderlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.listener.MessageListenerOrderly;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientManager;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.RequestCallback;
import org.apache.rocketmq.client.trace.TraceBean;
import org.apache.rocketmq.client.trace.TraceContext;
import org.apache.rocketmq.client.trace.TraceDataEncoder;
import org.apache.rocketmq.client.utils.MessageUtil;
import org.apache.rocketmq.client.producer.LocalTransactionState;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.client.producer.TransactionListener;
import org.apache.rocketmq.client.producer.TransactionMQProducer;
import org.apache.rocketmq.client.producer.TransactionSendResult;
import org.apache.rocketmq.common.admin.ConsumeStats;
import org.apache.rocketmq.common.protocol.body.ConsumeMessageDirectlyResult;
import org.apache.rocketmq.common.protocol.body.ConsumerRunningInfo;
import org.apache.rocketmq.common.protocol.body.ProcessQueueInfo;
import org.apache.rocketmq.common.protocol.heartbeat.SubscriptionData;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

/**
 * mqlab's interop scenarios for the RocketMQ 4.9.3 Java client.
 *
 * <pre>java ... org.mqlab.interop.JavaScenarios SCENARIO NAMESRV_ADDR PREFIX</pre>
 *
 * <p>Each scenario drives DefaultMQProducer, DefaultMQPushConsumer, DefaultLitePullConsumer or
 * DefaultMQPullConsumer as a user would, and prints one JSON object per line: what happened
 * ({@code "event": "send" | "consume" | ...}) and, last, {@code {"event": "result", ...}} with
 * what a user can observe. Ports, times and message ids are left out: the same scenario on a
 * real broker and on mqlab must print the same result. The checks live on the Python side
 * (mqlab.interop.java_scenarios). Topic and group names start with PREFIX.
 */
public final class JavaScenarios {
    private static String ns;
    private static String prefix;
    private static final Object OUT = new Object();
    /**
     * Every scenario client's mqClientApiTimeout (3 000 ms by default), which bounds its name
     * server route queries: at load 20 in a dry run, route queries to both brokers' name servers
     * timed out after 2 991 ms (IllegalStateException from updateTopicRouteInfoFromNameServer,
     * in a send wrapped as "send message Exception"). No observation depends on it.
     */
    static final int API_TIMEOUT_MS = 15000;

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: JavaScenarios SCENARIO NAMESRV_ADDR PREFIX");
            System.exit(2);
        }
        ns = args[1];
        prefix = args[2];
        System.setProperty("rocketmq.client.logLevel", "WARN");
        int rc = 0;
        try {
            Map<String, Object> result = run(args[0]);
            result.put("event", "result");
            emit(result);
        } catch (Throwable t) {
            Map<String, Object> err = new LinkedHashMap<>();
            err.put("event", "error");
            err.put("error", t.getClass().getName() + ": " + t.getMessage());
            emit(err);
            t.printStackTrace();
            rc = 1;
        }
        System.out.flush();
        // Client threads (Netty, schedulers) may linger after shutdown: leave at once.
        Runtime.getRuntime().halt(rc);
    }

    private static Map<String, Object> run(String name) throws Exception {
        if (name.startsWith("read-all:")) {
            // every message of the named topics (comma-separated, full names), each queue from
            // offset 0, with DefaultMQPullConsumer: the replication check reads a slave this way
            // once its master is stopped (findBrokerAddressInSubscribe falls back to the slave)
            Map<String, Object> topics = new TreeMap<>();
            for (String t : name.substring("read-all:".length()).split(",")) {
                topics.put(t, readAll(t));
            }
            return map("topics", topics);
        }
        switch (name) {
            case "producer-sync": return producerSync();
            case "producer-async": return producerAsync();
            case "producer-oneway": return producerOneway();
            case "producer-batch": return producerBatch();
            case "producer-orderly": return producerOrderly();
            case "producer-properties": return producerProperties();
            case "producer-delay-level": return producerDelayLevel();
            case "producer-auto-create-on": return producerAutoCreate(true);
            case "producer-auto-create-off": return producerAutoCreate(false);
            case "push-tags-rebalance": return pushTagsRebalance();
            case "push-sql92": return pushSql92();
            case "push-broadcasting": return pushBroadcasting();
            case "push-orderly-restart": return pushOrderlyRestart();
            case "push-retry-dlq": return pushRetryDlq();
            case "push-reset-offset": return pushResetOffset();
            case "push-from-first": return pushFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            case "push-from-last": return pushFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
            case "push-from-timestamp": return pushFromWhere(ConsumeFromWhere.CONSUME_FROM_TIMESTAMP);
            case "lite-pull-subscribe": return litePullSubscribe();
            case "lite-pull-assign-seek": return litePullAssignSeek();
            case "pull-explicit-offsets": return pullExplicitOffsets();
            case "request-reply": return requestReply();
            case "msg-trace": return msgTrace();
            case "admin-forwarding": return adminForwarding();
            case "transaction-commit": return transaction("commit", LocalTransactionState.COMMIT_MESSAGE, null);
            case "transaction-rollback": return transaction("rollback", LocalTransactionState.ROLLBACK_MESSAGE, null);
            case "transaction-check":
                return transaction("check", LocalTransactionState.UNKNOW, LocalTransactionState.COMMIT_MESSAGE);
            case "ha-failover": return haFailover();
            case "producer-broker-freeze": return producerBrokerFreeze();
            case "push-broker-kill": return pushBrokerKill();
            case "dledger-failover": return dledgerFailover();
            case "dledger-client": return DLedgerClientScenario.run();
            case "acl-clients": return AclScenarios.clients();
            default: throw new IllegalArgumentException("unknown scenario " + name);
        }
    }

    // ------------------------------------------------------------------ helpers

    static void emit(Map<String, Object> m) {
        synchronized (OUT) {
            System.out.println(JSON.toJSONString(m));
            System.out.flush();
        }
    }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static String ns() {
        return ns;
    }

    static String prefix() {
        return prefix;
    }

    static String topic(String name) {
        return prefix + name;
    }

    static DefaultMQProducer producer(String group) throws MQClientException {
        DefaultMQProducer p = new DefaultMQProducer(prefix + group);
        p.setNamesrvAddr(ns);
        p.setClientIP("127.0.0.1");
        p.setMqClientApiTimeout(API_TIMEOUT_MS);
        p.setInstanceName(prefix + group);
        p.setSendMsgTimeout(10000);
        p.start();
        return p;
    }

    static DefaultMQPushConsumer pushConsumer(String group, String instance) {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(prefix + group);
        c.setNamesrvAddr(ns);
        c.setClientIP("127.0.0.1");
        c.setMqClientApiTimeout(API_TIMEOUT_MS);
        c.setInstanceName(instance);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        return c;
    }

    static void waitFor(BooleanSupplier cond, long timeoutMs, String what) throws InterruptedException {
        long end = System.currentTimeMillis() + timeoutMs;
        while (!cond.getAsBoolean()) {
            if (System.currentTimeMillis() > end) {
                throw new IllegalStateException("timed out after " + timeoutMs + " ms waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    /** A value read again every 100 ms until {@code done} holds or {@code timeoutMs} passes; the last one read. */
    interface Reader<T> {
        T read() throws Exception;
    }

    static <T> T readUntil(Reader<T> reader, java.util.function.Predicate<T> done, long timeoutMs) throws Exception {
        long end = System.currentTimeMillis() + timeoutMs;
        T value = reader.read();
        while (!done.test(value) && System.currentTimeMillis() < end) {
            Thread.sleep(100);
            value = reader.read();
        }
        return value;
    }

    static Map<String, Object> sendView(SendResult r) {
        return map("status", r.getSendStatus().name(), "broker", r.getMessageQueue().getBrokerName(),
            "queueId", r.getMessageQueue().getQueueId(), "queueOffset", r.getQueueOffset(),
            "regionId", r.getRegionId(), "traceOn", r.isTraceOn());
    }

    static Map<String, Object> msgView(MessageExt m) {
        Map<String, String> props = new TreeMap<>(m.getProperties());
        // Ids and client-side bookkeeping: built from hosts, ports and times.
        props.remove("UNIQ_KEY");
        props.remove("MIN_OFFSET");
        props.remove("MAX_OFFSET");
        props.remove("CONSUME_START_TIME");
        props.remove("ORIGIN_MESSAGE_ID");
        return map("topic", m.getTopic(), "queueId", m.getQueueId(), "queueOffset", m.getQueueOffset(),
            "body", new String(m.getBody()), "tags", m.getTags(), "keys", m.getKeys(),
            "reconsumeTimes", m.getReconsumeTimes(), "sysFlag", m.getSysFlag(), "flag", m.getFlag(),
            "properties", props);
    }

    static Message msg(String topic, String tags, String body) {
        return new Message(topic, tags, body.getBytes());
    }

    /**
     * Every message of a topic's queues from offset 0, with a pull consumer (oneway checks). One
     * group for every reader, and a heartbeat sent after the pulls (heartbeatNow): its %RETRY%
     * topic then exists on both brokers however long the reader lived.
     */
    static List<Map<String, Object>> readAll(String topic) throws Exception {
        DefaultMQPullConsumer c = new DefaultMQPullConsumer(prefix + "reader");
        c.setNamesrvAddr(ns);
        c.setClientIP("127.0.0.1");
        c.setMqClientApiTimeout(API_TIMEOUT_MS);
        c.setInstanceName("reader" + System.nanoTime());
        c.start();
        try {
            List<Map<String, Object>> out = new ArrayList<>();
            List<MessageQueue> mqs = new ArrayList<>(c.fetchSubscribeMessageQueues(topic));
            Collections.sort(mqs);
            for (MessageQueue mq : mqs) {
                long offset = 0;
                while (true) {
                    PullResult r = c.pull(mq, "*", offset, 32);
                    if (r.getMsgFoundList() == null || r.getMsgFoundList().isEmpty()) {
                        break;
                    }
                    for (MessageExt m : r.getMsgFoundList()) {
                        out.add(msgView(m));
                    }
                    offset = r.getNextBeginOffset();
                }
            }
            heartbeatNow(c);
            return out;
        } finally {
            c.shutdown();
        }
    }

    // ------------------------------------------------------------------ DefaultMQProducer

    static Map<String, Object> producerSync() throws Exception {
        DefaultMQProducer p = producer("pg_sync");
        List<Object> sends = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                sends.add(sendView(p.send(msg(topic("Sync"), "TagA", "sync-" + i))));
            }
        } finally {
            p.shutdown();
        }
        return map("sends", sends, "stored", readAll(topic("Sync")));
    }

    static Map<String, Object> producerAsync() throws Exception {
        DefaultMQProducer p = producer("pg_async");
        // Create the topic's route first: concurrent first sends would all use TBW102.
        p.send(msg(topic("Async"), "TagA", "async-first"));
        Set<String> results = new TreeSet<>();
        CountDownLatch latch = new CountDownLatch(6);
        try {
            for (int i = 0; i < 6; i++) {
                final int n = i;
                p.send(msg(topic("Async"), "TagA", "async-" + i), new SendCallback() {
                    public void onSuccess(SendResult r) {
                        synchronized (results) {
                            results.add(r.getSendStatus() + " " + n);
                        }
                        latch.countDown();
                    }

                    public void onException(Throwable e) {
                        synchronized (results) {
                            results.add("exception " + n + " " + e.getMessage());
                        }
                        latch.countDown();
                    }
                });
            }
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("async callbacks did not all come");
            }
        } finally {
            p.shutdown();
        }
        List<Object> bodies = new ArrayList<>();
        for (Map<String, Object> m : readAll(topic("Async"))) {
            bodies.add(m.get("body"));
        }
        Collections.sort((List) bodies);
        return map("callbacks", new ArrayList<>(results), "storedBodies", bodies);
    }

    static Map<String, Object> producerOneway() throws Exception {
        DefaultMQProducer p = producer("pg_oneway");
        try {
            p.send(msg(topic("Oneway"), "TagA", "oneway-first"));
            for (int i = 0; i < 4; i++) {
                p.sendOneway(msg(topic("Oneway"), "TagA", "oneway-" + i));
            }
        } finally {
            p.shutdown();
        }
        // oneway sends are not answered: the store shows them when the broker has written them
        List<Map<String, Object>> stored = readUntil(() -> readAll(topic("Oneway")), s -> s.size() >= 5, 30000);
        return map("stored", stored);
    }

    static Map<String, Object> producerBatch() throws Exception {
        DefaultMQProducer p = producer("pg_batch");
        Map<String, Object> res;
        try {
            p.send(msg(topic("Batch"), "TagA", "batch-first"));
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Message m = msg(topic("Batch"), "TagB", "batch-" + i);
                m.setKeys("bk-" + i);
                batch.add(m);
            }
            SendResult r = p.send(batch);
            res = sendView(r);
            res.put("msgIds", r.getMsgId().split(",").length);
        } finally {
            p.shutdown();
        }
        return map("batch", res, "stored", readAll(topic("Batch")));
    }

    static Map<String, Object> producerOrderly() throws Exception {
        DefaultMQProducer p = producer("pg_orderly");
        List<Object> sends = new ArrayList<>();
        try {
            for (int i = 0; i < 12; i++) {
                int orderId = i % 3;
                SendResult r = p.send(msg(topic("Orderly"), "TagA", "order-" + orderId + "-" + i),
                    (mqs, m, arg) -> mqs.get((Integer) arg % mqs.size()), orderId);
                sends.add(sendView(r));
            }
        } finally {
            p.shutdown();
        }
        return map("sends", sends);
    }

    static Map<String, Object> producerProperties() throws Exception {
        DefaultMQProducer p = producer("pg_props");
        Map<String, Object> send;
        try {
            Message m = msg(topic("Props"), "TagP", "with-properties");
            m.setKeys(java.util.Arrays.asList("k1", "k2"));
            m.putUserProperty("color", "red");
            m.putUserProperty("a", "7");
            m.setFlag(3);
            send = sendView(p.send(m));
        } finally {
            p.shutdown();
        }
        return map("send", send, "stored", readAll(topic("Props")));
    }

    static Map<String, Object> producerDelayLevel() throws Exception {
        DefaultMQProducer p = producer("pg_delay");
        DefaultMQPushConsumer c = pushConsumer("cg_delay", "delay-c1");
        List<Map<String, Object>> got = new CopyOnWriteArrayList<>();
        Map<String, Long> sentAt = new ConcurrentHashMap<>();
        Map<String, Long> gotAt = new ConcurrentHashMap<>();
        Map<String, Object> send;
        try {
            p.send(msg(topic("Delay"), "TagA", "delay-first"));
            c.subscribe(topic("Delay"), "TagD");
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    gotAt.putIfAbsent(new String(m.getBody()), System.currentTimeMillis());
                    got.add(msgView(m));
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            c.start();
            Message m = msg(topic("Delay"), "TagD", "delayed");
            m.setDelayTimeLevel(2);
            sentAt.put("delayed", System.currentTimeMillis());
            send = sendView(p.send(m));
            waitFor(() -> got.size() >= 1, 30000, "the delayed message");
            Thread.sleep(500);
        } finally {
            c.shutdown();
            p.shutdown();
        }
        long delay = gotAt.get("delayed") - sentAt.get("delayed");
        return map("send", send, "delivered", got, "delayedAtLeastMs", delay >= 900 ? 900 : delay);
    }

    static Map<String, Object> producerAutoCreate(boolean on) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(ns);
        admin.setInstanceName("admin" + System.nanoTime());
        admin.start();
        String brokerAddr = admin.examineBrokerClusterInfo().getBrokerAddrTable().get("broker-a")
            .getBrokerAddrs().get(0L);
        java.util.Properties props = new java.util.Properties();
        props.setProperty("autoCreateTopicEnable", String.valueOf(on));
        admin.updateBrokerConfig(brokerAddr, props);
        DefaultMQProducer p = producer(on ? "pg_auto_on" : "pg_auto_off");
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            String t = topic(on ? "AutoOn" : "AutoOff");
            try {
                out.put("send", sendView(p.send(msg(t, "TagA", "auto"))));
                // the broker registers the new topic with the name server after it answered the
                // send (BrokerController#registerBrokerAll): a user polls its route, bounded
                List<MessageQueue> published = readUntil(() -> {
                    try {
                        return p.fetchPublishMessageQueues(t);
                    } catch (MQClientException e) {
                        return null;
                    }
                }, mqs -> mqs != null, 30000);
                if (published == null) {
                    published = p.fetchPublishMessageQueues(t);
                }
                List<Object> queues = new ArrayList<>();
                for (MessageQueue mq : published) {
                    queues.add(mq.getQueueId());
                }
                Collections.sort((List) queues);
                out.put("publishQueues", queues);
            } catch (MQClientException e) {
                out.put("exception", e.getClass().getSimpleName());
                out.put("responseCode", e.getResponseCode());
                out.put("message", e.getMessage());
            }
        } finally {
            p.shutdown();
            props.setProperty("autoCreateTopicEnable", "true");
            admin.updateBrokerConfig(brokerAddr, props);
            admin.shutdown();
        }
        return out;
    }

    // ------------------------------------------------------------------ DefaultMQPushConsumer

    static List<Integer> allocated(DefaultMQPushConsumer c, String topic) {
        List<Integer> ids = new ArrayList<>();
        for (MessageQueue mq : c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().keySet()) {
            if (mq.getTopic().equals(topic)) {
                ids.add(mq.getQueueId());
            }
        }
        Collections.sort(ids);
        return ids;
    }

    static MessageListenerConcurrently recorder(String who, List<Map<String, Object>> into) {
        return (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                Map<String, Object> v = msgView(m);
                v.put("consumer", who);
                into.add(v);
                emit(map("event", "consume", "consumer", who, "body", v.get("body")));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        };
    }

    static Map<String, Object> pushTagsRebalance() throws Exception {
        String t = topic("Rebalance");
        DefaultMQProducer p = producer("pg_rebalance");
        // Creates the topic; TagC, so no consumer here takes it (a delivery to c1 before the
        // rebalance could be delivered again to c2 after it, depending on timing).
        p.send(msg(t, "TagC", "warm-up"));
        List<Map<String, Object>> got = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c1 = pushConsumer("cg_rebalance", "c1");
        DefaultMQPushConsumer c2 = pushConsumer("cg_rebalance", "c2");
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            c1.subscribe(t, "TagA || TagB");
            c1.registerMessageListener(recorder("c1", got));
            c1.start();
            waitFor(() -> allocated(c1, t).size() == 4, 30000, "c1 owning 4 queues");
            out.put("c1Alone", allocated(c1, t));
            c2.subscribe(t, "TagA || TagB");
            c2.registerMessageListener(recorder("c2", got));
            c2.start();
            waitFor(() -> allocated(c1, t).size() == 2 && allocated(c2, t).size() == 2, 30000,
                "the rebalance to 2 + 2");
            out.put("c1AfterJoin", allocated(c1, t));
            out.put("c2AfterJoin", allocated(c2, t));
            for (int i = 0; i < 12; i++) {
                String tag = i % 3 == 0 ? "TagA" : (i % 3 == 1 ? "TagB" : "TagC");
                p.send(msg(t, tag, "rb-" + i), (mqs, m, arg) -> mqs.get((Integer) arg % mqs.size()), i);
            }
            waitFor(() -> got.size() >= 8, 30000, "8 TagA/TagB messages");
            Thread.sleep(1000);
        } finally {
            c2.shutdown();
            c1.shutdown();
            p.shutdown();
        }
        List<String> deliveries = new ArrayList<>();
        for (Map<String, Object> m : got) {
            deliveries.add(m.get("consumer") + " q" + m.get("queueId") + " " + m.get("body") + " " + m.get("tags"));
        }
        Collections.sort(deliveries);
        out.put("deliveries", deliveries);
        return out;
    }

    static Map<String, Object> pushSql92() throws Exception {
        String t = topic("Sql");
        DefaultMQProducer p = producer("pg_sql");
        p.send(msg(t, "TagA", "warm-up"));
        List<Map<String, Object>> got = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = pushConsumer("cg_sql", "sql-c1");
        try {
            c.subscribe(t, MessageSelector.bySql("a > 5"));
            c.registerMessageListener(recorder("c1", got));
            c.start();
            for (int i = 0; i < 10; i++) {
                Message m = msg(t, "TagS", "sql-" + i);
                m.putUserProperty("a", String.valueOf(i));
                p.send(m);
            }
            waitFor(() -> got.size() >= 4, 30000, "4 messages with a > 5");
            Thread.sleep(1500);
        } finally {
            c.shutdown();
            p.shutdown();
        }
        List<String> bodies = new ArrayList<>();
        for (Map<String, Object> m : got) {
            bodies.add((String) m.get("body"));
        }
        Collections.sort(bodies);
        return map("delivered", bodies);
    }

    static Map<String, Object> pushBroadcasting() throws Exception {
        String t = topic("Broadcast");
        DefaultMQProducer p = producer("pg_broadcast");
        p.send(msg(t, "TagA", "warm-up"));
        List<Map<String, Object>> got = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c1 = pushConsumer("cg_broadcast", "b1");
        DefaultMQPushConsumer c2 = pushConsumer("cg_broadcast", "b2");
        try {
            for (DefaultMQPushConsumer c : new DefaultMQPushConsumer[] {c1, c2}) {
                c.setMessageModel(MessageModel.BROADCASTING);
                c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
                c.subscribe(t, "*");
                c.registerMessageListener(recorder(c.getInstanceName(), got));
                c.start();
            }
            waitFor(() -> allocated(c1, t).size() == 4 && allocated(c2, t).size() == 4, 30000,
                "each broadcasting consumer owning all 4 queues");
            Thread.sleep(1000);
            for (int i = 0; i < 4; i++) {
                p.send(msg(t, "TagA", "bc-" + i));
            }
            waitFor(() -> got.size() >= 8, 30000, "every message at both consumers");
            Thread.sleep(1000);
        } finally {
            c2.shutdown();
            c1.shutdown();
            p.shutdown();
        }
        List<String> deliveries = new ArrayList<>();
        for (Map<String, Object> m : got) {
            deliveries.add(m.get("consumer") + " " + m.get("body"));
        }
        Collections.sort(deliveries);
        return map("deliveries", deliveries);
    }

    static Map<String, Object> pushOrderlyRestart() throws Exception {
        String t = topic("OrderlyRestart");
        DefaultMQProducer p = producer("pg_orderly_restart");
        for (int i = 0; i < 16; i++) {
            p.send(msg(t, "TagA", "o-" + (i % 4) + "-" + i), (mqs, m, arg) -> mqs.get((Integer) arg % mqs.size()), i % 4);
        }
        Map<String, List<String>> perQueue = new TreeMap<>();
        final int[] seen = {0};
        MessageListenerOrderly listener = (msgs, ctx) -> {
            synchronized (perQueue) {
                for (MessageExt m : msgs) {
                    perQueue.computeIfAbsent("q" + m.getQueueId(), k -> new ArrayList<>()).add(new String(m.getBody()));
                    seen[0]++;
                }
            }
            return ConsumeOrderlyStatus.SUCCESS;
        };
        DefaultMQPushConsumer c1 = pushConsumer("cg_orderly_restart", "o1");
        c1.subscribe(t, "*");
        c1.setPullBatchSize(2);
        c1.setConsumeMessageBatchMaxSize(1);
        c1.registerMessageListener(listener);
        c1.start();
        waitFor(() -> { synchronized (perQueue) { return seen[0] >= 16; } }, 30000, "16 messages");
        c1.shutdown();
        for (int i = 16; i < 24; i++) {
            p.send(msg(t, "TagA", "o-" + (i % 4) + "-" + i), (mqs, m, arg) -> mqs.get((Integer) arg % mqs.size()), i % 4);
        }
        DefaultMQPushConsumer c2 = pushConsumer("cg_orderly_restart", "o2");
        c2.subscribe(t, "*");
        c2.registerMessageListener(listener);
        c2.start();
        try {
            waitFor(() -> { synchronized (perQueue) { return seen[0] >= 24; } }, 60000, "24 messages across the restart");
            Thread.sleep(1000);
        } finally {
            c2.shutdown();
            p.shutdown();
        }
        return map("perQueue", perQueue);
    }

    static Map<String, Object> pushRetryDlq() throws Exception {
        String t = topic("Retry");
        DefaultMQProducer p = producer("pg_retry");
        p.send(msg(t, "TagA", "warm-up"));
        List<Map<String, Object>> attempts = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = pushConsumer("cg_retry", "r1");
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        c.setMaxReconsumeTimes(2);
        try {
            c.subscribe(t, "TagR");
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    Map<String, Object> v = msgView(m);
                    attempts.add(v);
                    emit(map("event", "consume", "reconsumeTimes", m.getReconsumeTimes(), "topic", m.getTopic()));
                }
                return ConsumeConcurrentlyStatus.RECONSUME_LATER;
            });
            c.start();
            waitFor(() -> allocated(c, t).size() == 4, 30000, "4 queues allocated");
            Thread.sleep(1000);
            p.send(msg(t, "TagR", "fails-always"));
            waitFor(() -> attempts.size() >= 3, 60000, "3 delivery attempts");
            Thread.sleep(4000);
        } finally {
            c.shutdown();
            p.shutdown();
        }
        List<Object> times = new ArrayList<>();
        for (Map<String, Object> a : attempts) {
            times.add(a.get("reconsumeTimes"));
        }
        List<Map<String, Object>> dlq = readAll("%DLQ%" + prefix + "cg_retry");
        List<Map<String, Object>> retry = readAll("%RETRY%" + prefix + "cg_retry");
        return map("attempts", attempts, "reconsumeTimes", times, "dlq", dlq, "retryTopic", retry);
    }

    /**
     * A running consumer moved back by an operator: DefaultMQAdminExt#resetOffsetByTimestamp (what
     * mqadmin resetOffsetByTime calls) sends INVOKE_BROKER_TO_RESET_OFFSET; the broker resets the
     * group's offsets and tells the live client (RESET_CONSUMER_CLIENT_OFFSET), which consumes the
     * four messages again.
     */
    static Map<String, Object> pushResetOffset() throws Exception {
        String t = topic("Reset");
        DefaultMQProducer p = producer("pg_reset");
        for (int i = 0; i < 4; i++) {
            p.send(msg(t, "TagA", "rs-" + i), (mqs, m, arg) -> mqs.get((Integer) arg % mqs.size()), i);
        }
        List<Map<String, Object>> got = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = pushConsumer("cg_reset", "reset-c1");
        Map<String, Object> out = new LinkedHashMap<>();
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(ns);
        admin.setInstanceName("admin" + System.nanoTime());
        try {
            c.subscribe(t, "*");
            c.registerMessageListener(recorder("c1", got));
            c.start();
            waitFor(() -> got.size() >= 4, 30000, "the 4 messages");
            // until the consumed offsets have reached the broker (persistAllConsumerOffset runs
            // 10 s after the client starts, then every 5 s), as an operator checks with
            // consumerProgress: a queue without a committed offset fails the reset
            admin.start();
            String group = prefix + "cg_reset";
            waitFor(() -> {
                try {
                    // the table also holds the group's %RETRY% queue: only this topic's count
                    ConsumeStats stats = admin.examineConsumeStats(group);
                    return stats.getOffsetTable().entrySet().stream()
                        .filter(e -> e.getKey().getTopic().equals(t) && e.getValue().getConsumerOffset() == 1)
                        .count() == 4;
                } catch (Exception e) {
                    return false;
                }
            }, 30000, "the consumer offsets committed on every queue");
            Map<MessageQueue, Long> reset = admin.resetOffsetByTimestamp(t, prefix + "cg_reset", 0L, true);
            List<String> table = new ArrayList<>();
            for (Map.Entry<MessageQueue, Long> e : reset.entrySet()) {
                table.add("q" + e.getKey().getQueueId() + " -> " + e.getValue());
            }
            Collections.sort(table);
            out.put("resetTo", table);
            waitFor(() -> got.size() >= 8, 30000, "the 4 messages again after the reset");
            Thread.sleep(1000);
        } finally {
            admin.shutdown();
            c.shutdown();
            p.shutdown();
        }
        List<String> bodies = new ArrayList<>();
        for (Map<String, Object> m : got) {
            bodies.add(m.get("queueId") + ":" + m.get("queueOffset") + " " + m.get("body"));
        }
        Collections.sort(bodies);
        out.put("delivered", bodies);
        return out;
    }

    static Map<String, Object> pushFromWhere(ConsumeFromWhere where) throws Exception {
        String suffix = where.name().replace("CONSUME_FROM_", "").replace("_OFFSET", "");
        String t = topic("From" + suffix);
        DefaultMQProducer p = producer("pg_from_" + suffix);
        for (int i = 0; i < 4; i++) {
            p.send(msg(t, "TagA", "old-" + i), (mqs, m, arg) -> mqs.get(0), 0);
        }
        Thread.sleep(1200);
        long between = System.currentTimeMillis();
        Thread.sleep(1200);
        for (int i = 0; i < 2; i++) {
            p.send(msg(t, "TagA", "mid-" + i), (mqs, m, arg) -> mqs.get(0), 0);
        }
        List<Map<String, Object>> got = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = pushConsumer("cg_from_" + suffix, "f1");
        c.setConsumeFromWhere(where);
        if (where == ConsumeFromWhere.CONSUME_FROM_TIMESTAMP) {
            c.setConsumeTimestamp(org.apache.rocketmq.common.UtilAll.timeMillisToHumanString3(between));
        }
        try {
            c.subscribe(t, "*");
            c.registerMessageListener(recorder("f1", got));
            c.start();
            waitFor(() -> allocated(c, t).size() == 4, 30000, "4 queues allocated");
            Thread.sleep(2000);
            p.send(msg(t, "TagA", "new-0"), (mqs, m, arg) -> mqs.get(0), 0);
            waitFor(() -> got.stream().anyMatch(m -> "new-0".equals(m.get("body"))), 30000, "the new message");
            Thread.sleep(1000);
        } finally {
            c.shutdown();
            p.shutdown();
        }
        List<String> bodies = new ArrayList<>();
        for (Map<String, Object> m : got) {
            bodies.add(m.get("queueOffset") + " " + m.get("body"));
        }
        Collections.sort(bodies);
        return map("delivered", bodies);
    }

    // ------------------------------------------------------------------ DefaultLitePullConsumer

    static Map<String, Object> litePullSubscribe() throws Exception {
        String t = topic("LiteSub");
        DefaultMQProducer p = producer("pg_lite_sub");
        for (int i = 0; i < 8; i++) {
            p.send(msg(t, i % 2 == 0 ? "TagA" : "TagB", "lite-" + i));
        }
        p.shutdown();
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(prefix + "cg_lite_sub");
        c.setNamesrvAddr(ns);
        c.setClientIP("127.0.0.1");
        c.setMqClientApiTimeout(API_TIMEOUT_MS);
        c.setInstanceName("lite-sub");
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(t, "TagA");
        c.start();
        List<String> bodies = new ArrayList<>();
        try {
            long end = System.currentTimeMillis() + 30000;
            while (bodies.size() < 4 && System.currentTimeMillis() < end) {
                for (MessageExt m : c.poll(1000)) {
                    bodies.add(new String(m.getBody()));
                }
            }
        } finally {
            c.shutdown();
        }
        Collections.sort(bodies);
        return map("polled", bodies);
    }

    static Map<String, Object> litePullAssignSeek() throws Exception {
        String t = topic("LiteAssign");
        DefaultMQProducer p = producer("pg_lite_assign");
        for (int i = 0; i < 6; i++) {
            p.send(msg(t, "TagA", "la-" + i), (mqs, m, arg) -> mqs.get(1), 0);
        }
        p.shutdown();
        DefaultLitePullConsumer c = new DefaultLitePullConsumer(prefix + "cg_lite_assign");
        c.setNamesrvAddr(ns);
        c.setClientIP("127.0.0.1");
        c.setMqClientApiTimeout(API_TIMEOUT_MS);
        c.setInstanceName("lite-assign");
        c.setAutoCommit(false);
        c.start();
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            MessageQueue mq = null;
            for (MessageQueue q : c.fetchMessageQueues(t)) {
                if (q.getQueueId() == 1) {
                    mq = q;
                }
            }
            c.assign(Collections.singletonList(mq));
            c.seek(mq, 2);
            List<String> bodies = new ArrayList<>();
            long end = System.currentTimeMillis() + 30000;
            while (bodies.size() < 4 && System.currentTimeMillis() < end) {
                for (MessageExt m : c.poll(1000)) {
                    bodies.add(m.getQueueOffset() + " " + new String(m.getBody()));
                }
            }
            out.put("polledFromSeek", bodies);
            heartbeatNow(c);  // after the pulls: the route, and so the broker, is known
            c.commitSync();
            final MessageQueue committedMq = mq;
            out.put("committed", readUntil(() -> c.committed(committedMq), v -> v == 6, 10000));
        } finally {
            c.shutdown();
        }
        return out;
    }

    // ------------------------------------------------------------------ DefaultMQPullConsumer

    static Map<String, Object> pullExplicitOffsets() throws Exception {
        String t = topic("PullExplicit");
        DefaultMQProducer p = producer("pg_pull");
        for (int i = 0; i < 5; i++) {
            p.send(msg(t, i < 3 ? "TagA" : "TagB", "pe-" + i), (mqs, m, arg) -> mqs.get(2), 0);
        }
        p.shutdown();
        DefaultMQPullConsumer c = new DefaultMQPullConsumer(prefix + "cg_pull");
        c.setNamesrvAddr(ns);
        c.setClientIP("127.0.0.1");
        c.setMqClientApiTimeout(API_TIMEOUT_MS);
        c.setInstanceName("pull-explicit");
        c.start();
        List<Object> pulls = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            MessageQueue mq = new MessageQueue(t, "broker-a", 2);
            long[][] asks = {{0, 32}, {1, 2}, {3, 32}, {5, 32}, {9, 32}};
            for (long[] ask : asks) {
                PullResult r = c.pull(mq, "*", ask[0], (int) ask[1]);
                pulls.add(pullView("*", ask[0], r));
            }
            heartbeatNow(c);
            PullResult tagged = c.pull(mq, "TagB", 0, 32);
            pulls.add(pullView("TagB", 0, tagged));
            c.updateConsumeOffset(mq, 3);
            c.getOffsetStore().persist(mq);
            // persist sends UPDATE_CONSUMER_OFFSET oneway: read it back until the broker has it
            out.put("fetchedFromBroker", readUntil(() -> c.fetchConsumeOffset(mq, true), v -> v == 3, 10000));
            out.put("maxOffset", c.maxOffset(mq));
            out.put("minOffset", c.minOffset(mq));
        } finally {
            c.shutdown();
        }
        out.put("pulls", pulls);
        return out;
    }

    /**
     * Sends the client's heartbeat now. MQClientInstance#startScheduledTask sends the first one
     * 1 s after start, and the broker's heartBeat creates the group's %RETRY% topic: a consumer
     * that lives 0.9 s on one broker and 1.1 s on the other (a loaded machine) would leave
     * different topic lists for mqadmin/topic-list and wipe-add-write-perm to show.
     */
    static void heartbeatNow(ClientConfig c) throws MQClientException {
        MQClientManager.getInstance().getOrCreateMQClientInstance(c).sendHeartbeatToAllBrokerWithLock();
    }

    static Map<String, Object> pullView(String expr, long offset, PullResult r) {
        List<String> found = new ArrayList<>();
        if (r.getMsgFoundList() != null) {
            for (MessageExt m : r.getMsgFoundList()) {
                found.add(m.getQueueOffset() + " " + new String(m.getBody()));
            }
        }
        return map("expr", expr, "offset", offset, "status", r.getPullStatus().name(),
            "nextBeginOffset", r.getNextBeginOffset(), "minOffset", r.getMinOffset(),
            "maxOffset", r.getMaxOffset(), "found", found);
    }

    @SuppressWarnings("unused")
    private static <T> List<T> sorted(Collection<T> c) {
        List<T> l = new ArrayList<>(c);
        l.sort(null);
        return l;
    }

    // ------------------------------------------------------------------ request-reply and trace

    /**
     * producer.request() sync and with a RequestCallback, answered by a push consumer that
     * replies with MessageUtil.createReplyMessage; then a request nobody answers (timeout).
     */
    static Map<String, Object> requestReply() throws Exception {
        String t = topic("Request");
        String silent = topic("RequestSilent");
        DefaultMQProducer requester = producer("pg_request");
        DefaultMQProducer replier = producer("pg_replier");
        // The replier's producer creates the topics: the requester has no route for them yet,
        // so its first request() fetches it and sends a heartbeat to the broker at once
        // (prepareSendRequest). Without that heartbeat the broker may not know the requester's
        // channel when the reply comes (its periodic heartbeat starts 1 s after start).
        replier.send(msg(t, "TagA", "warm-up"));
        replier.send(msg(silent, "TagA", "warm-up"));
        List<String> served = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = pushConsumer("cg_request", "replier");
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
            c.subscribe(t, "TagR");
            c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    try {
                        String body = new String(m.getBody());
                        Message reply = MessageUtil.createReplyMessage(m, ("pong:" + body).getBytes());
                        SendResult r = replier.send(reply, 10000);
                        served.add(body + " -> " + r.getSendStatus() + " " + r.getMessageQueue().getTopic());
                        emit(map("event", "reply", "body", body, "status", r.getSendStatus().name()));
                    } catch (Exception e) {
                        served.add("reply failed: " + e);
                        emit(map("event", "reply", "body", new String(m.getBody()), "error", e.toString()));
                    }
                }
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
            });
            c.start();
            waitFor(() -> allocated(c, t).size() == 4, 30000, "the replier owning all 4 queues");
            Message syncReq = msg(t, "TagR", "ping-sync");
            Message syncReply = requester.request(syncReq, 10000);
            out.put("syncReply", replyView(syncReq, syncReply));
            CountDownLatch latch = new CountDownLatch(1);
            Map<String, Object> async = new ConcurrentHashMap<>();
            Message asyncReq = msg(t, "TagR", "ping-async");
            requester.request(asyncReq, new RequestCallback() {
                public void onSuccess(Message m) {
                    async.putAll(replyView(asyncReq, m));
                    latch.countDown();
                }

                public void onException(Throwable e) {
                    async.put("exception", e.getClass().getSimpleName() + ": " + e.getMessage());
                    latch.countDown();
                }
            }, 10000);
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the request callback did not come");
            }
            out.put("asyncReply", new TreeMap<>(async));
            try {
                Message r = requester.request(msg(silent, "TagR", "nobody-answers"), 1500);
                out.put("timeout", "a reply: " + new String(r.getBody()));
            } catch (Exception e) {
                out.put("timeout", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            Collections.sort(served);
            out.put("served", served);
        } finally {
            c.shutdown();
            requester.shutdown();
            replier.shutdown();
        }
        return out;
    }

    static Map<String, Object> replyView(Message request, Message reply) {
        Map<String, String> props = new TreeMap<>(reply.getProperties());
        boolean sameId = request.getProperty("CORRELATION_ID").equals(props.remove("CORRELATION_ID"));
        props.remove("UNIQ_KEY");
        props.remove("ARRIVE_TIME");
        props.remove("PUSH_REPLY_TIME");
        props.put("REPLY_TO_CLIENT", props.get("REPLY_TO_CLIENT") == null ? null : "<requester>");
        return map("topic", reply.getTopic(), "body", new String(reply.getBody()),
            "sameCorrelationId", sameId, "properties", props);
    }

    /** enableMsgTrace on a producer and a push consumer: Pub, SubBefore and SubAfter records. */
    static Map<String, Object> msgTrace() throws Exception {
        String t = topic("Traced");
        DefaultMQProducer p = new DefaultMQProducer(prefix + "pg_trace", true);
        p.setNamesrvAddr(ns);
        p.setClientIP("127.0.0.1");
        p.setMqClientApiTimeout(API_TIMEOUT_MS);
        p.setInstanceName(prefix + "pg_trace");
        p.setSendMsgTimeout(10000);
        p.start();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(prefix + "cg_trace", true);
        c.setNamesrvAddr(ns);
        c.setClientIP("127.0.0.1");
        c.setMqClientApiTimeout(API_TIMEOUT_MS);
        c.setInstanceName("trace-c1");
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        List<Map<String, Object>> got = new CopyOnWriteArrayList<>();
        List<Map<String, Object>> records = new ArrayList<>();
        try {
            c.subscribe(t, "*");
            c.registerMessageListener(recorder("c1", got));
            Message m = new Message(t, "TagT", "trace-key", "traced".getBytes());
            SendResult r = p.send(m);
            c.start();
            waitFor(() -> got.size() >= 1, 30000, "the traced message consumed");
            String msgId = r.getMsgId();
            long end = System.currentTimeMillis() + 30000;
            while (true) {
                records = traceRecords(msgId);
                Set<String> types = new TreeSet<>();
                for (Map<String, Object> x : records) {
                    types.add((String) x.get("type"));
                }
                if (types.size() == 3 || System.currentTimeMillis() > end) {
                    break;
                }
                Thread.sleep(500);
            }
        } finally {
            c.shutdown();
            p.shutdown();
        }
        return map("delivered", got.size(), "records", records);
    }

    /** The trace records in RMQ_SYS_TRACE_TOPIC about one message, times and hosts left out. */
    static List<Map<String, Object>> traceRecords(String msgId) throws Exception {
        List<Map<String, Object>> out = new ArrayList<>();
        Set<String> seen = new TreeSet<>();
        for (Map<String, Object> stored : readAll("RMQ_SYS_TRACE_TOPIC")) {
            for (TraceContext ctx : TraceDataEncoder.decoderFromTraceDataString((String) stored.get("body"))) {
                for (TraceBean b : ctx.getTraceBeans()) {
                    if (!msgId.equals(b.getMsgId())) {
                        continue;
                    }
                    Map<String, Object> v = map("type", ctx.getTraceType().name(),
                        "group", ctx.getGroupName(), "topic", b.getTopic(), "tags", b.getTags(),
                        "keys", b.getKeys(), "bodyLength", b.getBodyLength(),
                        "success", ctx.isSuccess(), "traceTopicTags", stored.get("tags"),
                        "traceTopicKeysHasMsgId", String.valueOf(stored.get("keys")).contains(msgId));
                    if (seen.add(JSON.toJSONString(v))) {
                        out.add(v);
                    }
                }
            }
        }
        out.sort((a, b) -> JSON.toJSONString(a).compareTo(JSON.toJSONString(b)));
        return out;
    }

    /**
     * What the broker forwards to a running consumer for an operator (mqadmin consumerStatus,
     * consumeMessage, getConsumerStatus): GET_CONSUMER_RUNNING_INFO (307),
     * CONSUME_MESSAGE_DIRECTLY (309), INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223 -> 221).
     */
    static Map<String, Object> adminForwarding() throws Exception {
        String t = topic("Forward");
        String group = prefix + "cg_forward";
        String clientId = "127.0.0.1@fwd-c1";
        DefaultMQProducer p = producer("pg_forward");
        SendResult sent = p.send(msg(t, "TagA", "fwd-0"), (mqs, m, arg) -> mqs.get(0), null);
        List<Map<String, Object>> got = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = pushConsumer("cg_forward", "fwd-c1");
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(ns);
        admin.setInstanceName("admin" + System.nanoTime());
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            c.subscribe(t, "*");
            c.registerMessageListener(recorder("c1", got));
            c.start();
            waitFor(() -> got.size() >= 1, 30000, "the message consumed");
            admin.start();
            // until the consumer's own offset table has moved past the message (the listener
            // returned), as an operator would watch it with consumerStatus
            waitFor(() -> {
                try {
                    return admin.getConsumerRunningInfo(group, clientId, false).getMqTable().entrySet().stream()
                        .anyMatch(e -> e.getKey().getTopic().equals(t) && e.getValue().getCommitOffset() == 1);
                } catch (Exception e) {
                    return false;
                }
            }, 30000, "the consumer's offset at 1");
            ConsumerRunningInfo info = admin.getConsumerRunningInfo(group, clientId, false);
            Map<String, Object> props = new TreeMap<>();
            for (String k : new String[] {"PROP_CONSUME_TYPE", "PROP_CONSUMEORDERLY", "consumerGroup",
                "messageModel", "PROP_CLIENT_VERSION"}) {
                props.put(k, info.getProperties().getProperty(k));
            }
            List<String> subs = new ArrayList<>();
            for (SubscriptionData sd : info.getSubscriptionSet()) {
                subs.add(sd.getTopic() + " " + sd.getSubString());
            }
            Map<String, Object> queues = new TreeMap<>();
            for (Map.Entry<MessageQueue, ProcessQueueInfo> e : info.getMqTable().entrySet()) {
                if (e.getKey().getTopic().equals(t)) {
                    queues.put("q" + e.getKey().getQueueId(), e.getValue().getCommitOffset());
                }
            }
            out.put("runningInfo", map("properties", props, "subscriptions", subs, "commitOffsets", queues,
                "statusTopics", new TreeSet<>(info.getStatusTable().keySet())));
            try {
                admin.getConsumerRunningInfo(group, "127.0.0.1@nobody", false);
                out.put("runningInfoOffline", "no exception");
            } catch (Exception e) {
                out.put("runningInfoOffline", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            ConsumeMessageDirectlyResult direct = admin.consumeMessageDirectly(group, clientId, sent.getOffsetMsgId());
            out.put("consumeDirectly", map("result", String.valueOf(direct.getConsumeResult()),
                "order", direct.isOrder(), "autoCommit", direct.isAutoCommit(), "remark", direct.getRemark()));
            waitFor(() -> got.size() >= 2, 30000, "the message consumed once more, directly");
            Map<String, Map<MessageQueue, Long>> status = admin.getConsumeStatus(t, group, "");
            Map<String, Object> st = new TreeMap<>();
            for (Map.Entry<String, Map<MessageQueue, Long>> e : status.entrySet()) {
                Map<String, Long> offs = new TreeMap<>();
                for (Map.Entry<MessageQueue, Long> q : e.getValue().entrySet()) {
                    offs.put("q" + q.getKey().getQueueId(), q.getValue());
                }
                st.put(e.getKey(), offs);
            }
            out.put("consumeStatus", st);
            List<String> bodies = new ArrayList<>();
            for (Map<String, Object> m : got) {
                bodies.add((String) m.get("body"));
            }
            out.put("delivered", bodies);
        } finally {
            admin.shutdown();
            c.shutdown();
            p.shutdown();
        }
        return out;
    }

    // ------------------------------------------------------------------ TransactionMQProducer

    /**
     * One transactional message: the local transaction answers {@code first}; with
     * {@code check} not null the broker's check-back (CHECK_TRANSACTION_STATE) answers it.
     * Waits until the message is on its topic (commit), or for 3 s more than the check would
     * take (rollback: nothing may arrive).
     */
    static Map<String, Object> transaction(String name, LocalTransactionState first,
            LocalTransactionState check) throws Exception {
        TransactionMQProducer p = new TransactionMQProducer(prefix + "tpg_" + name);
        p.setNamesrvAddr(ns);
        p.setClientIP("127.0.0.1");
        p.setMqClientApiTimeout(API_TIMEOUT_MS);
        p.setInstanceName(prefix + "tpg_" + name);
        p.setSendMsgTimeout(10000);
        List<Map<String, Object>> checks = new CopyOnWriteArrayList<>();
        List<String> executed = new CopyOnWriteArrayList<>();
        p.setTransactionListener(new TransactionListener() {
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                executed.add(new String(msg.getBody()) + " " + arg);
                return first;
            }

            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                Map<String, Object> v = msgView(msg);
                v.remove("queueOffset"); // the half message's copy: RMQ_SYS_TRANS_HALF_TOPIC's offset
                checks.add(v);
                return check == null ? LocalTransactionState.UNKNOW : check;
            }
        });
        p.start();
        String t = topic("Tx" + name);
        Map<String, Object> send;
        List<Map<String, Object>> stored;
        try {
            TransactionSendResult r = p.sendMessageInTransaction(msg(t, "TagT", "tx-" + name), "arg-1");
            send = sendView(r);
            send.put("localTransactionState", r.getLocalTransactionState().name());
            if (first == LocalTransactionState.COMMIT_MESSAGE || check == LocalTransactionState.COMMIT_MESSAGE) {
                waitFor(() -> {
                    try {
                        return !readAll(t).isEmpty();
                    } catch (Exception e) {
                        return false;
                    }
                }, 60000, "the committed message on " + t);
                Thread.sleep(1500); // one more check interval: no second check may come
            } else {
                Thread.sleep(2000); // a check would come after 1 s (transactionTimeOut) + at most 1 s
            }
            stored = readAll(t);
        } finally {
            p.shutdown();
        }
        return map("send", send, "executed", executed, "checks", checks, "stored", stored);
    }

    // ------------------------------------------------------------------ a master+slave group

    private static java.io.BufferedReader stdin;

    /**
     * Ask the harness to do {@code step} (stop or start the master: mqlab.interop.java_client
     * #run_java_interactive) and wait until it answers {@code "<step> done"} on stdin.
     */
    static void harness(String step, Object... kv) throws java.io.IOException {
        Map<String, Object> m = map("event", "await", "step", step);
        m.putAll(map(kv));
        emit(m);
        if (stdin == null) {
            stdin = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
        }
        String line = stdin.readLine();
        if (line == null || !line.trim().equals(step + " done")) {
            throw new IllegalStateException("the harness answered " + line + " to " + step);
        }
    }

    static int duplicates(List<String> bodies) {
        return bodies.size() - new TreeSet<>(bodies).size();
    }

    /** Topic {@code t} with {@code queues} read and write queues on every master; their names, sorted. */
    static List<String> createTopicOnEachMaster(String t, int queues) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(ns);
        admin.setInstanceName("admin" + System.nanoTime());
        admin.start();
        List<String> brokers = new ArrayList<>();
        try {
            for (org.apache.rocketmq.common.protocol.route.BrokerData bd
                    : admin.examineBrokerClusterInfo().getBrokerAddrTable().values()) {
                brokers.add(bd.getBrokerName());
                admin.createAndUpdateTopicConfig(bd.getBrokerAddrs().get(0L),
                    new org.apache.rocketmq.common.TopicConfig(t, queues, queues, 6));
            }
        } finally {
            admin.shutdown();
        }
        Collections.sort(brokers);
        return brokers;
    }

    /** Until {@code p}'s route of {@code t} has {@code n} queues to send to (30 s at most). */
    static void waitForPublishQueues(DefaultMQProducer p, String t, int n) throws InterruptedException {
        waitFor(() -> {
            try {
                return p.fetchPublishMessageQueues(t).size() == n;
            } catch (MQClientException e) {
                return false;
            }
        }, 30000, "the route with " + n + " queue(s)");
    }

    /**
     * A push consumer whose broker is killed while the consumer's pull is parked there (long
     * polling), then started again. One queue on broker-a; routes polled every second. The
     * consumer takes m0; a second later the harness kills broker-a's JVM and starts it again
     * on the same store and ports; then m1 is sent. When the consumer takes m1 says whether the
     * parked pull failed when the connection closed or waited out its 30 s timeout
     * (CONSUMER_TIMEOUT_MILLIS_WHEN_SUSPEND) first. Times are epoch ms.
     */
    static Map<String, Object> pushBrokerKill() throws Exception {
        String t = topic("Kill");
        createTopicOnEachMaster(t, 1);
        Map<String, Long> got = new ConcurrentHashMap<>();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(prefix + "cg_kill");
        c.setNamesrvAddr(ns);
        c.setClientIP("127.0.0.1");
        c.setInstanceName(prefix + "cg_kill");
        c.setPollNameServerInterval(1000);
        c.subscribe(t, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                got.putIfAbsent(new String(m.getBody()), System.currentTimeMillis());
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        DefaultMQProducer p = producer("pg_kill");
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            c.start();
            waitForPublishQueues(p, t, 1);
            p.send(msg(t, "TagK", "m0"));
            waitFor(() -> got.containsKey("m0"), 60000, "m0 consumed");
            Thread.sleep(1000);
            out.put("m0ConsumedAt", got.get("m0"));
            harness("kill-restart", "broker", "broker-a");
            out.put("backAt", System.currentTimeMillis());
            SendResult r = null;
            for (int i = 0; i < 20 && r == null; i++) {
                try {
                    r = p.send(msg(t, "TagK", "m1"));
                } catch (Exception e) {
                    Thread.sleep(500);
                }
            }
            out.put("m1SentAt", System.currentTimeMillis());
            out.put("m1Send", r == null ? null : sendView(r));
            waitFor(() -> got.containsKey("m1"), 90000, "m1 consumed");
            out.put("m1ConsumedAt", got.get("m1"));
        } finally {
            c.shutdown();
            p.shutdown();
        }
        return out;
    }

    /**
     * A producer facing a broker whose machine fell silent. Topic with 2 queues on broker-a and
     * on broker-b; the producer has 4.9.3's defaults (sendMsgTimeout and mqClientApiTimeout
     * 3 000 ms, 2 retries, no latency fault tolerance) except routes polled every second and
     * heartbeats every 10 minutes (the first at 1 s): the client's scheduled tasks share one
     * thread (MQClientInstance#startScheduledTask), and a heartbeat to the silent broker would
     * hold the route refreshes for 3 s. After 4 sends, the harness stops broker-a's JVM
     * (SIGSTOP: its kernel still acknowledges, nothing is read or written). Then sends back to
     * back: each records its first attempt's queue (a SendMessageHook), outcome and duration,
     * and a watcher records when the producer's route leaves broker-a out. Ends 4 sends after
     * that, or after 90 s. Times are epoch ms, for the harness's clock.
     */
    static Map<String, Object> producerBrokerFreeze() throws Exception {
        String t = topic("Freeze");
        List<String> brokers = createTopicOnEachMaster(t, 2);
        DefaultMQProducer p = new DefaultMQProducer(prefix + "pg_freeze");
        p.setNamesrvAddr(ns);
        p.setClientIP("127.0.0.1");
        p.setInstanceName(prefix + "pg_freeze");
        p.setPollNameServerInterval(1000);
        p.setHeartbeatBrokerInterval(600000);
        final List<String> attempted = new CopyOnWriteArrayList<>();
        p.getDefaultMQProducerImpl().registerSendMessageHook(
            new org.apache.rocketmq.client.hook.SendMessageHook() {
                @Override
                public String hookName() {
                    return "mqlab-first-attempt";
                }

                @Override
                public void sendMessageBefore(org.apache.rocketmq.client.hook.SendMessageContext c) {
                    attempted.add(c.getMq().getBrokerName() + "/" + c.getMq().getQueueId());
                }

                @Override
                public void sendMessageAfter(org.apache.rocketmq.client.hook.SendMessageContext c) {
                }
            });
        p.start();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("brokers", brokers);
        List<Object> sends = new ArrayList<>();
        final long[] routeLeft = {0};
        Thread watcher = null;
        try {
            waitForPublishQueues(p, t, 4);
            List<Object> warm = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                warm.add(sendView(p.send(msg(t, "TagF", "warm-" + i))));
            }
            out.put("warm", warm);
            harness("freeze", "broker", "broker-a");
            out.put("frozenAt", System.currentTimeMillis());
            watcher = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    org.apache.rocketmq.client.impl.producer.TopicPublishInfo info =
                        p.getDefaultMQProducerImpl().getTopicPublishInfoTable().get(t);
                    boolean hasA = false;
                    for (MessageQueue mq : info.getMessageQueueList()) {
                        hasA |= mq.getBrokerName().equals("broker-a");
                    }
                    if (!hasA) {
                        synchronized (routeLeft) {
                            routeLeft[0] = System.currentTimeMillis();
                        }
                        return;
                    }
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "route-watcher");
            watcher.setDaemon(true);
            watcher.start();
            long end = System.currentTimeMillis() + 90000;
            int after = 0;
            for (int i = 0; after < 4 && System.currentTimeMillis() < end; i++) {
                attempted.clear();
                long begin = System.currentTimeMillis();
                Map<String, Object> s = map("i", i, "at", begin);
                org.apache.rocketmq.client.impl.producer.TopicPublishInfo tpi0 =
                    p.getDefaultMQProducerImpl().getTopicPublishInfoTable().get(t);
                s.put("indexBefore", tpi0.getSendWhichQueue().toString());
                s.put("info", System.identityHashCode(tpi0));
                try {
                    SendResult r = p.send(msg(t, "TagF", "freeze-" + i));
                    s.put("status", r.getSendStatus().name());
                } catch (Exception e) {
                    s.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                s.put("ms", System.currentTimeMillis() - begin);
                org.apache.rocketmq.client.impl.producer.TopicPublishInfo tpi1 =
                    p.getDefaultMQProducerImpl().getTopicPublishInfoTable().get(t);
                s.put("indexAfter", tpi1.getSendWhichQueue().toString());
                s.put("infoAfter", System.identityHashCode(tpi1));
                s.put("attempts", new ArrayList<>(attempted));
                synchronized (routeLeft) {
                    if (routeLeft[0] != 0 && routeLeft[0] <= begin) {
                        after++;
                    }
                }
                emit(map("event", "send", "send", s));
                sends.add(s);
            }
        } finally {
            if (watcher != null) {
                watcher.interrupt();
            }
            // no shutdown: its UNREGISTER_CLIENT would wait 3 s on the silent broker, and
            // main() halts the JVM
        }
        // what broker-b stored, by queue: a send that failed may have reached it too
        DefaultMQAdminExt admin2 = new DefaultMQAdminExt();
        admin2.setNamesrvAddr(ns);
        admin2.setInstanceName("admin" + System.nanoTime());
        admin2.start();
        try {
            Map<String, Object> stored = new TreeMap<>();
            for (int q = 0; q < 2; q++) {
                stored.put("broker-b/" + q, admin2.maxOffset(new MessageQueue(t, "broker-b", q)));
            }
            out.put("storedOnB", stored);
        } finally {
            admin2.shutdown();
        }
        out.put("sends", sends);
        out.put("routeLeftAt", routeLeft[0]);
        return out;
    }

    /**
     * A SYNC_MASTER and its slave: 24 sends (each SEND_OK once the slave has it); a push consumer
     * takes 4 and stops (its one consume thread held, at most 1 message cached per queue: the
     * rest stays on the brokers); the harness stops the master; the consumer goes on, its pulls
     * going to the slave once the route (polled every second) has no master
     * (MQClientInstance#findBrokerAddressInSubscribe), until it has all 24; the harness starts
     * the master again; 8 more sends, and the consumer takes them from the master.
     */
    static Map<String, Object> haFailover() throws Exception {
        String t = topic("HaFailover");
        int n = 24;
        int gateAt = 4;
        int after = 8;
        List<String> bodies = new CopyOnWriteArrayList<>();
        CountDownLatch gate = new CountDownLatch(1);
        List<Object> sends = new ArrayList<>();
        List<Object> sendsAfter = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        DefaultMQProducer p = producer("pg_ha");
        try {
            for (int i = 0; i < n; i++) {
                sends.add(sendView(p.send(msg(t, "TagH", "ha-" + i))));
            }
        } finally {
            p.shutdown();
        }
        out.put("sends", sends);
        DefaultMQPushConsumer c = pushConsumer("cg_ha", "ha-c1");
        c.setPullBatchSize(1);
        c.setConsumeMessageBatchMaxSize(1);
        c.setPullThresholdForQueue(1);
        c.setConsumeThreadMin(1);
        c.setConsumeThreadMax(1);
        c.setPollNameServerInterval(1000);
        c.subscribe(t, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                bodies.add(new String(m.getBody()));
                emit(map("event", "consume", "body", new String(m.getBody()), "queueId", m.getQueueId()));
            }
            if (bodies.size() >= gateAt) {
                try {
                    gate.await(180, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        DefaultMQProducer p2 = null;
        try {
            c.start();
            waitFor(() -> bodies.size() >= gateAt, 60000, gateAt + " messages from the master");
            out.put("consumedBeforeStop", new ArrayList<>(bodies).size());
            harness("stop-master", "topic", t);
            // what the consumer holds now came from the master (the blocked message is both
            // delivered and still in its process queue); the rest can only come from the slave
            long held = 0;
            for (org.apache.rocketmq.client.impl.consumer.ProcessQueue pq
                    : c.getDefaultMQPushConsumerImpl().getRebalanceImpl().getProcessQueueTable().values()) {
                held += pq.getMsgCount().get();
            }
            out.put("fromSlave", n - (gateAt - 1 + held));
            gate.countDown();
            waitFor(() -> new TreeSet<>(bodies).size() >= n, 120000, "all " + n + " messages, the rest from the slave");
            Thread.sleep(1000);
            List<String> outage = new ArrayList<>(bodies);
            out.put("consumedDuringOutage", new ArrayList<>(new TreeSet<>(outage)));
            out.put("duplicatesBeforeRestart", duplicates(outage));
            harness("start-master", "topic", t);
            p2 = producer("pg_ha_after");
            for (int i = 0; i < after; i++) {
                SendResult r = p2.send(msg(t, "TagH", "ha-after-" + i));
                sendsAfter.add(sendView(r));
            }
            waitFor(() -> new TreeSet<>(bodies).size() >= n + after, 120000, "the " + after + " messages sent after the restart");
            Thread.sleep(2000);
        } finally {
            gate.countDown();
            c.shutdown();
            if (p2 != null) {
                p2.shutdown();
            }
        }
        List<String> all = new ArrayList<>(bodies);
        List<String> afterBodies = new ArrayList<>();
        for (String b : new TreeSet<>(all)) {
            if (b.startsWith("ha-after-")) {
                afterBodies.add(b);
            }
        }
        out.put("consumedAfterRestart", afterBodies);
        out.put("sendsAfterRestart", sendsAfter);
        out.put("duplicatesAfterRestart", duplicates(all) - (int) out.get("duplicatesBeforeRestart"));
        out.put("duplicatedBodies", all.stream().filter(b -> Collections.frequency(all, b) > 1).distinct().sorted()
            .collect(java.util.stream.Collectors.toList()));
        return out;
    }

    // ------------------------------------------------------------------ a DLedger broker group

    /**
     * A DLedger broker group (brokers of one brokerName, the DLedger leader's broker the master,
     * brokerId 0): 16 sends, a push consumer (a new group, from the first offset) consuming from
     * the first one on (at least 4 consumed before the kill); the harness kills the leader (no shutdown); 16 more, each tried again a
     * second after a failure (up to 90 s) until the broker answers, the route polled every second
     * (MQClientInstance#updateTopicRouteInfoFromNameServer) so that the sends and the pulls reach
     * the new master once the name server lists it; then a batch of 4 to the new master (one
     * SEND_BATCH_MESSAGE); the consumer goes on until it has every
     * SEND_OK'd one (up to 120 s). What a user sees: each send's answer, the failed tries, what
     * was acknowledged and what was consumed (its offsets, kept by the dead master, may be older
     * on the new one: duplicates are allowed).
     */
    static Map<String, Object> dledgerFailover() throws Exception {
        String t = topic("DlFailover");
        int before = 16;
        int after = 16;
        List<String> acked = new ArrayList<>();
        List<Object> sends = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        Map<String, Object> out = new LinkedHashMap<>();
        List<String> bodies = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = pushConsumer("cg_dl", "dl-c1");
        c.setPollNameServerInterval(1000);
        c.subscribe(t, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                bodies.add(new String(m.getBody()));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        DefaultMQProducer p = new DefaultMQProducer(prefix + "pg_dl");
        p.setNamesrvAddr(ns);
        p.setClientIP("127.0.0.1");
        p.setMqClientApiTimeout(API_TIMEOUT_MS);
        p.setInstanceName(prefix + "pg_dl");
        p.setSendMsgTimeout(3000);
        p.setPollNameServerInterval(1000);
        try {
            p.start();
            for (int i = 0; i < before + after; i++) {
                if (i == before) {
                    // consuming: at least 4 taken from the master before it is killed
                    waitFor(() -> new TreeSet<>(bodies).size() >= 4, 60000, "4 consumed before the kill");
                    out.put("consumedBeforeKill", new TreeSet<>(bodies).size());
                    harness("kill-leader", "topic", t);
                }
                String body = "dl-" + i;
                long end = System.currentTimeMillis() + 90000;
                while (true) {
                    try {
                        SendResult r = p.send(msg(t, "TagD", body));
                        Map<String, Object> v = sendView(r);
                        v.put("body", body);
                        sends.add(v);
                        if (r.getSendStatus() == SendStatus.SEND_OK) {
                            acked.add(body);
                        }
                        break;
                    } catch (Exception e) {
                        String why = String.valueOf(e.getMessage()).split("\n")[0];
                        failures.add(body + ": " + e.getClass().getSimpleName() + ": "
                            + why.substring(0, Math.min(120, why.length())));
                        if (System.currentTimeMillis() > end) {
                            throw new IllegalStateException("no answer for " + body + " in 90 s", e);
                        }
                        Thread.sleep(1000);
                    }
                }
                if (i == 0) {
                    // the topic exists (auto-created by the first send): the consumer starts
                    // and consumes while the rest are sent, through the kill
                    c.start();
                }
            }
            // a batch to the new master (DefaultMQProducer#send(Collection)): one
            // SEND_BATCH_MESSAGE, an entry a message (DLedgerCommitLog#asyncPutMessages)
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                batch.add(msg(t, "TagB", "dl-batch-" + i));
            }
            SendResult br = p.send(batch);
            Map<String, Object> bv = sendView(br);
            bv.put("body", "dl-batch-0..3");
            bv.put("offsetMsgIds", br.getOffsetMsgId().split(",").length);
            sends.add(bv);
            if (br.getSendStatus() == SendStatus.SEND_OK) {
                for (Message m : batch) {
                    acked.add(new String(m.getBody()));
                }
            }
            long end = System.currentTimeMillis() + 120000;
            while (!new TreeSet<>(bodies).containsAll(acked) && System.currentTimeMillis() < end) {
                Thread.sleep(100);
            }
            Thread.sleep(1000);
        } finally {
            p.shutdown();
            c.shutdown();
        }
        out.put("sends", sends);
        out.put("failedTries", failures);
        out.put("acked", acked);
        List<String> all = new ArrayList<>(bodies);
        TreeSet<String> consumed = new TreeSet<>(all);
        List<String> missing = new ArrayList<>();
        for (String b : acked) {
            if (!consumed.contains(b)) {
                missing.add(b);
            }
        }
        List<String> unacked = new ArrayList<>();
        for (String b : consumed) {
            if (!acked.contains(b)) {
                unacked.add(b);
            }
        }
        out.put("consumed", new ArrayList<>(consumed));
        out.put("missing", missing);
        out.put("consumedNotAcked", unacked);
        out.put("duplicates", duplicates(all));
        return out;
    }
}
