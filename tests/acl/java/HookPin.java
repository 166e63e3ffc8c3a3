import java.util.Base64;
import java.util.HashSet;
import java.util.TreeMap;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.filter.FilterAPI;
import org.apache.rocketmq.common.protocol.RequestCode;
import org.apache.rocketmq.common.protocol.header.PullMessageRequestHeader;
import org.apache.rocketmq.common.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.common.protocol.header.SendMessageRequestHeaderV2;
import org.apache.rocketmq.common.protocol.heartbeat.ConsumeType;
import org.apache.rocketmq.common.protocol.heartbeat.ConsumerData;
import org.apache.rocketmq.common.protocol.heartbeat.HeartbeatData;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.common.protocol.heartbeat.ProducerData;
import org.apache.rocketmq.common.protocol.heartbeat.SubscriptionData;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Prints what 4.9.3's AclClientRPCHook does to four requests, as the Java client builds them:
 * the ext fields on the wire (sorted) and the body's Base64. tests/acl/test_acl_client_rpc_hook.py
 * pins these values. Not run by the tests; to re-run (jars from ~/.m2, the conformance runner's
 * classpath):
 *
 * <pre>
 * CP=$(cat conformance/java/target/classpath.txt)
 * javac -cp "$CP" -d /tmp/hookpin tests/acl/java/HookPin.java && java -cp "/tmp/hookpin:$CP" HookPin
 * </pre>
 */
public class HookPin {
    static void show(String name, RemotingCommand r, AclClientRPCHook hook) throws Exception {
        hook.doBeforeRequest("127.0.0.1:10911", r);
        r.makeCustomHeaderToNet();
        System.out.println(name + " ext=" + new TreeMap<>(r.getExtFields()));
        System.out.println(name + " body=" + (r.getBody() == null ? "null" : Base64.getEncoder().encodeToString(r.getBody())));
    }

    public static void main(String[] a) throws Exception {
        AclClientRPCHook hook = new AclClientRPCHook(new SessionCredentials("mqlabUser", "user-secret-1"));

        SendMessageRequestHeader h = new SendMessageRequestHeader();
        h.setProducerGroup("PG"); h.setTopic("TopicA"); h.setDefaultTopic("TBW102"); h.setDefaultTopicQueueNums(4);
        h.setQueueId(1); h.setSysFlag(0); h.setBornTimestamp(1700000000000L); h.setFlag(0);
        h.setProperties("KEYS\u0001k1\u0002WAIT\u0001true\u0002"); h.setReconsumeTimes(0); h.setUnitMode(false);
        h.setBatch(false);
        RemotingCommand send = RemotingCommand.createRequestCommand(RequestCode.SEND_MESSAGE_V2,
            SendMessageRequestHeaderV2.createSendMessageRequestHeaderV2(h));
        send.setBody("hello".getBytes("UTF-8"));
        show("send", send, hook);

        PullMessageRequestHeader p = new PullMessageRequestHeader();
        p.setConsumerGroup("CG"); p.setTopic("TopicA"); p.setQueueId(1); p.setQueueOffset(5L);
        p.setMaxMsgNums(32); p.setSysFlag(6); p.setCommitOffset(0L); p.setSuspendTimeoutMillis(15000L);
        p.setSubscription("TagA || TagB"); p.setSubVersion(1700000000001L); p.setExpressionType("TAG");
        show("pull", RemotingCommand.createRequestCommand(RequestCode.PULL_MESSAGE, p), hook);

        HeartbeatData hb = new HeartbeatData();
        hb.setClientID("127.0.0.1@mqlab");
        ProducerData pd = new ProducerData();
        pd.setGroupName("PG");
        hb.getProducerDataSet().add(pd);
        ConsumerData cd = new ConsumerData();
        cd.setGroupName("CG"); cd.setConsumeType(ConsumeType.CONSUME_PASSIVELY);
        cd.setMessageModel(MessageModel.CLUSTERING); cd.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
        SubscriptionData sd = FilterAPI.buildSubscriptionData("TopicA", "TagA");
        sd.setSubVersion(1700000000001L);
        cd.getSubscriptionDataSet().add(sd);
        hb.getConsumerDataSet().add(cd);
        RemotingCommand heartbeat = RemotingCommand.createRequestCommand(RequestCode.HEART_BEAT, null);
        heartbeat.setBody(hb.encode());
        show("heartbeat", heartbeat, hook);

        show("cluster", RemotingCommand.createRequestCommand(RequestCode.GET_BROKER_CLUSTER_INFO, null), hook);

        AclClientRPCHook token = new AclClientRPCHook(new SessionCredentials("mqlabUser", "user-secret-1", "tok-1"));
        show("token", RemotingCommand.createRequestCommand(RequestCode.GET_BROKER_CLUSTER_INFO, null), token);
    }
}
