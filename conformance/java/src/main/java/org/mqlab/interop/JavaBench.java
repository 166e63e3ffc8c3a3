package org.mqlab.interop;

import com.alibaba.fastjson.JSON;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * The same load against a real RocketMQ 4.9.3 broker and against mqlab: N producer threads
 * send 100-byte messages synchronously (one DefaultMQProducer, as an application shares one),
 * and one DefaultMQPushConsumer consumes them end to end.
 *
 * <pre>java ... org.mqlab.interop.JavaBench NAMESRV TOPIC THREADS MESSAGES_PER_THREAD</pre>
 *
 * <p>Prints one JSON object: messages sent and consumed, send throughput (msg/s over the sending
 * window), end-to-end throughput (msg/s from the first send to the last consume), and the p50 /
 * p99 of the send call and of send-to-consume latency in ms. Each message carries the
 * System.nanoTime() of its send in a user property; producer and consumer share this JVM, so
 * the clocks agree. 200 warm-up messages per thread go first and are not counted (their number
 * is printed as "warmup": they pass the broker too, for a CPU-per-message figure).
 * "sendStatus" counts the measured sends by their SendResult's status (SEND_OK, FLUSH_DISK_TIMEOUT,
 * FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE; EXCEPTION when send threw), "warmupSendStatus" the
 * warm-up's: a SYNC_MASTER without a slave that reports answers SLAVE_NOT_AVAILABLE or
 * FLUSH_SLAVE_TIMEOUT, which DefaultMQProducer returns (retryAnotherBrokerWhenNotStoreOK is false).
 */
public final class JavaBench {
    public static void main(String[] args) throws Exception {
        String ns = args[0];
        String topic = args[1];
        int threads = Integer.parseInt(args[2]);
        int perThread = Integer.parseInt(args[3]);
        int warmup = 200;
        String run = "b" + System.nanoTime();

        DefaultMQProducer producer = new DefaultMQProducer("bench_pg_" + run);
        producer.setNamesrvAddr(ns);
        producer.setClientIP("127.0.0.1");
        producer.setInstanceName("bench-p-" + run);
        producer.setSendMsgTimeout(10000);
        producer.start();
        // the topic exists before the consumer subscribes (auto-created, 4 queues)
        producer.send(new Message(topic, "W", "create".getBytes()));

        final int total = threads * perThread;
        AtomicInteger consumed = new AtomicInteger();
        ConcurrentLinkedQueue<Long> e2e = new ConcurrentLinkedQueue<>();
        final long[] lastConsume = {0};
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("bench_cg_" + run);
        consumer.setNamesrvAddr(ns);
        consumer.setClientIP("127.0.0.1");
        consumer.setInstanceName("bench-c-" + run);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        consumer.subscribe(topic, "M");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            long now = System.nanoTime();
            for (MessageExt m : msgs) {
                String t = m.getUserProperty("t");
                if (t != null) {
                    e2e.add(now - Long.parseLong(t));
                    if (consumed.incrementAndGet() == total) {
                        lastConsume[0] = now;
                    }
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        Thread.sleep(2000);

        byte[] body = new byte[100];
        Arrays.fill(body, (byte) 'x');
        // warm-up: JIT on both sides, connections, the consumer's pull loop
        Map<String, AtomicInteger> warmupStatus = new ConcurrentHashMap<>();
        runThreads(threads, warmup, producer, topic, "W", body, new ConcurrentLinkedQueue<>(), warmupStatus);
        ConcurrentLinkedQueue<Long> sendLatency = new ConcurrentLinkedQueue<>();
        Map<String, AtomicInteger> sendStatus = new ConcurrentHashMap<>();
        long start = System.nanoTime();
        int failed = runThreads(threads, perThread, producer, topic, "M", body, sendLatency, sendStatus);
        long sendEnd = System.nanoTime();
        long deadline = System.currentTimeMillis() + 120000;
        while (consumed.get() < total - failed && System.currentTimeMillis() < deadline) {
            Thread.sleep(5);
        }
        long end = lastConsume[0] != 0 ? lastConsume[0] : System.nanoTime();
        consumer.shutdown();
        producer.shutdown();

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("threads", threads);
        out.put("warmup", threads * warmup);
        out.put("sent", total - failed);
        out.put("failed", failed);
        out.put("consumed", consumed.get());
        out.put("sendMsgPerSec", round((total - failed) / ((sendEnd - start) / 1e9)));
        out.put("e2eMsgPerSec", round(consumed.get() / ((end - start) / 1e9)));
        out.put("sendP50Ms", pct(sendLatency, 50));
        out.put("sendP99Ms", pct(sendLatency, 99));
        out.put("e2eP50Ms", pct(e2e, 50));
        out.put("e2eP99Ms", pct(e2e, 99));
        out.put("sendStatus", counts(sendStatus));
        out.put("warmupSendStatus", counts(warmupStatus));
        System.out.println(JSON.toJSONString(out));
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    static int runThreads(int threads, int n, DefaultMQProducer p, String topic, String tag, byte[] body,
                          ConcurrentLinkedQueue<Long> latencies, Map<String, AtomicInteger> statuses)
            throws InterruptedException {
        AtomicInteger failed = new AtomicInteger();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                for (int k = 0; k < n; k++) {
                    Message m = new Message(topic, tag, body);
                    long t0 = System.nanoTime();
                    m.putUserProperty("t", Long.toString(t0));
                    String status;
                    try {
                        SendResult r = p.send(m);
                        status = r.getSendStatus().name();
                        if (r.getSendStatus() != SendStatus.SEND_OK) {
                            failed.incrementAndGet();
                        }
                    } catch (Exception e) {
                        status = "EXCEPTION";
                        failed.incrementAndGet();
                    }
                    statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                    latencies.add(System.nanoTime() - t0);
                }
            });
            ts.add(t);
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        return failed.get();
    }

    static Map<String, Integer> counts(Map<String, AtomicInteger> statuses) {
        Map<String, Integer> out = new TreeMap<>();
        statuses.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    static double pct(ConcurrentLinkedQueue<Long> values, int p) {
        long[] v = values.stream().mapToLong(Long::longValue).sorted().toArray();
        if (v.length == 0) {
            return -1;
        }
        int idx = (int) Math.min(v.length - 1, Math.ceil(p / 100.0 * v.length) - 1);
        return round(v[Math.max(idx, 0)] / 1e6);
    }

    static double round(double x) {
        return Math.round(x * 100) / 100.0;
    }
}
