package org.mqlab.interop;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.RPCHook;

/**
 * The Java client with {@code AclClientRPCHook} against a broker with ACL on: scenario
 * {@code acl-clients} of {@link JavaScenarios}.
 *
 * <p>The accounts, topics and groups are the conformance group's (mqlab/conformance/scenarios/
 * acl_accounts.py): the user {@code mqlabUser} may PUB|SUB {@code acl_t_pubsub}, SUB only
 * {@code acl_t_sub}, and SUB with groups {@code acl_g_sub} and {@code acl_g_pubsub}. The topics
 * must exist on the ACL broker alone (the harness creates them), so that routes lead there.
 *
 * <p>Prints what a user sees: send statuses, and for a refused send the exception the client
 * throws (its class, and the broker's code and message it carries), the bodies a push
 * consumer and a lite-pull consumer receive.
 */
final class AclScenarios {
    static final SessionCredentials USER = new SessionCredentials("mqlabUser", "user-secret-1");
    static final SessionCredentials WRONG = new SessionCredentials("mqlabUser", "not-the-secret");

    private AclScenarios() {
    }

    static DefaultMQProducer producer(String group, RPCHook hook, String instance) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(group, hook);
        p.setNamesrvAddr(JavaScenarios.ns());
        p.setClientIP("127.0.0.1");
        p.setMqClientApiTimeout(JavaScenarios.API_TIMEOUT_MS);
        p.setInstanceName(instance);
        p.setSendMsgTimeout(10000);
        p.start();
        return p;
    }

    /** A refused send as the user sees it: the exception's class, then the broker's answer. */
    static Map<String, Object> refused(DefaultMQProducer p, String topic) {
        try {
            SendResult r = p.send(JavaScenarios.msg(topic, "TagA", "refused"));
            return JavaScenarios.map("status", r.getSendStatus().name());
        } catch (Exception e) {
            Throwable cause = e;
            while (cause.getCause() != null && !(cause instanceof MQBrokerException)) {
                cause = cause.getCause();
            }
            Map<String, Object> out = JavaScenarios.map("exception", e.getClass().getName(),
                "sendTimes", e.getMessage().replaceAll("(?s)^Send \\[(\\d+)\\] times.*", "$1"));
            if (cause instanceof MQBrokerException) {
                out.put("brokerCode", ((MQBrokerException) cause).getResponseCode());
                out.put("brokerMessage", ((MQBrokerException) cause).getErrorMessage());
            }
            return out;
        }
    }

    static Map<String, Object> clients() throws Exception {
        String prefix = JavaScenarios.prefix();
        Map<String, Object> out = JavaScenarios.map();
        // 1. a producer signing with the user's keys
        DefaultMQProducer p = producer("acl_pg", new AclClientRPCHook(USER), prefix + "acl-producer");
        List<String> statuses = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                statuses.add(p.send(JavaScenarios.msg("acl_t_pubsub", "TagA", "acl-" + i)).getSendStatus().name());
            }
            out.put("sent", statuses);
            // 2. the same user where it may only subscribe
            out.put("sendNoPub", refused(p, "acl_t_sub"));
        } finally {
            p.shutdown();
        }
        // 3. a producer with the wrong secret (its own client instance: another instance name)
        DefaultMQProducer wrong = producer("acl_pg_wrong", new AclClientRPCHook(WRONG), prefix + "acl-wrong");
        try {
            out.put("sendWrongSecret", refused(wrong, "acl_t_pubsub"));
        } finally {
            wrong.shutdown();
        }
        // 4. a push consumer signing with the user's keys, group acl_g_sub
        List<String> pushed = new CopyOnWriteArrayList<>();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer("acl_g_sub", new AclClientRPCHook(USER),
            new AllocateMessageQueueAveragely());
        c.setNamesrvAddr(JavaScenarios.ns());
        c.setClientIP("127.0.0.1");
        c.setMqClientApiTimeout(JavaScenarios.API_TIMEOUT_MS);
        c.setInstanceName(prefix + "acl-push");
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe("acl_t_pubsub", "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                pushed.add(new String(m.getBody()));
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        try {
            JavaScenarios.waitFor(() -> pushed.size() >= 4, 60000, "4 messages pushed");
        } finally {
            c.shutdown();
        }
        List<String> pushedSorted = new ArrayList<>(pushed);
        Collections.sort(pushedSorted);
        out.put("pushed", pushedSorted);
        // 5. a lite-pull consumer signing with the user's keys, group acl_g_pubsub
        DefaultLitePullConsumer lite = new DefaultLitePullConsumer("acl_g_pubsub", new AclClientRPCHook(USER));
        lite.setNamesrvAddr(JavaScenarios.ns());
        lite.setClientIP("127.0.0.1");
        lite.setMqClientApiTimeout(JavaScenarios.API_TIMEOUT_MS);
        lite.setInstanceName(prefix + "acl-lite");
        lite.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        lite.subscribe("acl_t_pubsub", "*");
        lite.start();
        List<String> polled = new ArrayList<>();
        try {
            long end = System.currentTimeMillis() + 60000;
            while (polled.size() < 4 && System.currentTimeMillis() < end) {
                for (MessageExt m : lite.poll(1000)) {
                    polled.add(new String(m.getBody()));
                }
            }
        } finally {
            lite.shutdown();
        }
        Collections.sort(polled);
        out.put("polled", polled);
        return out;
    }
}
