package org.mqlab.conformance;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.BrokerPathConfigHelper;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.common.protocol.body.ClusterInfo;
import org.apache.rocketmq.common.protocol.route.BrokerData;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.common.ServiceThread;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingAbstract;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import sun.misc.Signal;

/**
 * The real Apache RocketMQ 4.9.3 name server and one master broker in one JVM: mqlab's oracle.
 *
 * <p>Starts them the way RocketMQ's own integration tests embed them (a {@code NamesrvController},
 * then a {@code BrokerController} built from BrokerConfig, NettyServerConfig, NettyClientConfig and
 * MessageStoreConfig), without the Startup classes, so no ROCKETMQ_HOME is needed. Logging goes
 * through slf4j to whatever {@code -Dlogback.configurationFile} names.
 *
 * <pre>
 * java ... org.mqlab.conformance.RealCluster --namesrv-port P --broker-port Q --ha-port H
 *      --store DIR [--broker-name broker-a] [--cluster DefaultCluster] [--ready-timeout-ms N]
 *      [--ignore-stdin] [key=value ...]
 * </pre>
 *
 * <p>Each {@code key=value} is applied with {@code MixAll.properties2Object} to all four broker
 * config beans, as {@code BrokerStartup} does with its {@code -c} file; a key that no bean has a
 * setter for is an error (a typo would otherwise be silently ignored). The broker also listens on
 * {@code brokerPort - 2} (its VIP channel) and on the HA port.
 *
 * <p>Commands on stdin (see {@link #watchStdin}) stop the master alone, and start or stop a SLAVE
 * broker (brokerId 1) in this JVM: a master and its slave for the price of one JVM start.
 *
 * <p>Prints {@code mqlab-real-cluster ready namesrv=127.0.0.1:P broker=127.0.0.1:Q} once the name
 * server's route table holds the broker and its topics. SIGTERM (or end of stdin: the parent died)
 * (unless {@code --ignore-stdin}, for a run in the background by hand) shuts the broker down, then
 * the name server, prints {@code mqlab-real-cluster stopped} and exits
 * 0 (1, after "stopped with errors", when a shutdown threw).
 */
public final class RealCluster {
    private static final String TAG = "mqlab-real-cluster";

    private final Options options;
    private NamesrvController namesrv;
    private BrokerController broker;
    /** Slaves started by {@code start-slave}, by broker name. */
    private final Map<String, BrokerController> slaves = new java.util.LinkedHashMap<>();
    /** Further masters started by {@code start-broker} (e.g. one with ACL on), by broker name. */
    private final Map<String, BrokerController> others = new java.util.LinkedHashMap<>();
    private boolean masterStopped;
    private boolean stopped;
    private boolean stopOk = true;

    private RealCluster(Options options) {
        this.options = options;
    }

    /** Command-line options; everything after the named ones is a broker property. */
    static final class Options {
        int namesrvPort = -1;
        int brokerPort = -1;
        int haPort = -1;
        String store;
        String brokerName = "broker-a";
        String cluster = "DefaultCluster";
        long readyTimeoutMs = 60_000;
        boolean watchStdin = true;
        /** {@code --namesrv-addr}: run no name server; the master registers with this one. */
        String namesrvAddr;
        /** {@code --no-broker}: run the name server alone (slaves may be started later). */
        boolean noBroker;
        final Properties brokerProperties = new Properties();
        /** {@code --namesrv-property KEY=VALUE}: a NamesrvConfig or NettyServerConfig field of our name server. */
        final Properties namesrvProperties = new Properties();

        /** The name server the brokers register with: ours, or {@code --namesrv-addr}. */
        String namesrvAddr() {
            return namesrvAddr != null ? namesrvAddr : "127.0.0.1:" + namesrvPort;
        }

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--namesrv-port": o.namesrvPort = Integer.parseInt(args[++i]); break;
                    case "--broker-port": o.brokerPort = Integer.parseInt(args[++i]); break;
                    case "--ha-port": o.haPort = Integer.parseInt(args[++i]); break;
                    case "--store": o.store = args[++i]; break;
                    case "--broker-name": o.brokerName = args[++i]; break;
                    case "--cluster": o.cluster = args[++i]; break;
                    case "--ready-timeout-ms": o.readyTimeoutMs = Long.parseLong(args[++i]); break;
                    case "--ignore-stdin": o.watchStdin = false; break;
                    case "--namesrv-addr": o.namesrvAddr = args[++i]; break;
                    case "--no-broker": o.noBroker = true; break;
                    case "--namesrv-property": {
                        String kv = args[++i];
                        int at = kv.indexOf('=');
                        if (at <= 0) {
                            throw new IllegalArgumentException("--namesrv-property needs KEY=VALUE, got " + kv);
                        }
                        o.namesrvProperties.setProperty(kv.substring(0, at), kv.substring(at + 1));
                        break;
                    }
                    default:
                        int eq = a.indexOf('=');
                        if (a.startsWith("-") || eq <= 0) {
                            throw new IllegalArgumentException("unknown argument: " + a);
                        }
                        o.brokerProperties.setProperty(a.substring(0, eq), a.substring(eq + 1));
                }
            }
            boolean namesrvOk = o.namesrvAddr != null ? o.namesrvPort <= 0 && !o.noBroker : o.namesrvPort > 0;
            boolean brokerOk = o.noBroker || (o.brokerPort > 0 && o.haPort > 0);
            if (!namesrvOk || !brokerOk || o.store == null) {
                throw new IllegalArgumentException(
                    "usage: RealCluster (--namesrv-port P | --namesrv-addr HOST:PORT)"
                        + " (--broker-port Q --ha-port H | --no-broker) --store DIR"
                        + " [--broker-name N] [--cluster C] [key=value ...]");
            }
            return o;
        }
    }

    public static void main(String[] args) throws Exception {
        // Before any RocketMQ class reads them (TlsSystemConfig and the store's disk guards read
        // system properties when they are initialised); a -D on the command line wins.
        setIfAbsent("tls.server.mode", "disabled");
        // As NamesrvStartup and BrokerStartup do first thing: the version every RemotingCommand
        // carries. Without it requests and responses say version 0, and the name server takes the
        // broker's REGISTER_BROKER for a pre-3.0.11 one (DefaultRequestProcessor#processRequest):
        // it decodes the body the old way and registers the broker with no topics at all.
        System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
        setIfAbsent("rocketmq.broker.diskSpaceWarningLevelRatio", "0.99");
        setIfAbsent("rocketmq.broker.diskSpaceCleanForciblyRatio", "0.98");

        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(TAG + ": " + e.getMessage());
            System.exit(2);
            return;
        }
        RealCluster cluster = new RealCluster(options);
        Runtime.getRuntime().addShutdownHook(new Thread(cluster::stop, "mqlab-real-cluster-stop"));
        Signal.handle(new Signal("TERM"), sig -> exitAfterStop(cluster));
        Signal.handle(new Signal("INT"), sig -> exitAfterStop(cluster));
        try {
            cluster.start();
        } catch (Throwable t) {
            System.err.println(TAG + ": start failed: " + t);
            t.printStackTrace();
            System.out.flush();
            Runtime.getRuntime().halt(1);
        }
        // one write: printf sends each piece of its format as a write of its own (System.out
        // flushes every write), and a log line on stderr, the same file, landed between them
        System.out.print(String.format("%s ready namesrv=%s broker=%s%n", TAG, options.namesrvAddr(),
            options.noBroker ? "none" : "127.0.0.1:" + options.brokerPort));
        System.out.flush();
        if (options.watchStdin) {
            watchStdin(cluster);
        }
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static void exitAfterStop(RealCluster cluster) {
        // Run off the signal thread; System.exit runs the (idempotent) shutdown hook once more.
        Thread t = new Thread(() -> {
            System.exit(cluster.stop() ? 0 : 1);
        }, "mqlab-real-cluster-exit");
        t.start();
    }

    /**
     * Commands, one a line on stdin; each answers one line {@code mqlab-real-cluster done N ...}
     * or {@code mqlab-real-cluster failed N <why>}, N counting commands from 1:
     *
     * <ul>
     *   <li>{@code stop-master}: shut the master broker down (it unregisters from the name server;
     *       the name server and any slave keep running);
     *   <li>{@code start-master}: start the stopped master again, on its store and ports;
     *   <li>{@code start-slave NAME PORT HA_PORT STORE [key=value ...]}: start a SLAVE broker
     *       (brokerId 1) of broker name NAME; it registers with this JVM's name server (or the
     *       {@code namesrvAddr=} given) and learns its master's HA address from the registration
     *       result (or from {@code haMasterAddress=}); answers once the name server holds it;
     *   <li>{@code stop-slave NAME};
     *   <li>{@code start-broker NAME PORT HA_PORT STORE [key=value ...]}: start another MASTER
     *       (brokerId 0) of broker name NAME in this JVM, registered with this name server, with
     *       only the runner's defaults and the given properties (not the first master's). With
     *       {@code aclEnable=true} and {@code rocketmqHome=DIR} its PlainAccessValidator reads
     *       {@code DIR/conf/plain_acl.yml} (see {@link #startBroker});
     *   <li>{@code stop-broker NAME}.
     * </ul>
     *
     * <p>End of stdin means the process that started us is gone: stop rather than linger.
     */
    private static void watchStdin(RealCluster cluster) {
        Thread t = new Thread(() -> {
            int n = 0;
            try {
                java.io.BufferedReader in = new java.io.BufferedReader(
                    new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null) {
                    line = line.trim();
                    if (line.isEmpty()) {
                        continue;
                    }
                    n++;
                    String answer;
                    try {
                        answer = TAG + " done " + n + " " + cluster.command(line.split("\\s+"));
                    } catch (Throwable e) {
                        e.printStackTrace();
                        answer = TAG + " failed " + n + " " + e;
                    }
                    System.out.print(answer.replace('\n', ' ') + "\n");
                    System.out.flush();
                }
            } catch (IOException ignored) {
                // treated as end of input
            }
            exitAfterStop(cluster);
        }, "mqlab-real-cluster-stdin");
        t.setDaemon(true);
        t.start();
    }

    private synchronized String command(String[] words) throws Exception {
        if (stopped) {
            throw new IllegalStateException("stopping");
        }
        switch (words[0]) {
            case "stop-master": {
                if (options.noBroker) {
                    throw new IllegalStateException("this JVM runs no master (--no-broker)");
                }
                if (masterStopped) {
                    throw new IllegalStateException("the master is already stopped");
                }
                masterStopped = true;
                shutdownBroker(broker);
                return "stop-master";
            }
            case "start-master": {
                if (options.noBroker) {
                    throw new IllegalStateException("this JVM runs no master (--no-broker)");
                }
                if (!masterStopped) {
                    throw new IllegalStateException("the master is running");
                }
                // a new BrokerController on the same store, ports and properties (a restart:
                // the store recovers, the broker registers again, its slaves reconnect)
                Options o = options;
                broker = startBroker(o.brokerName, MixAll.MASTER_ID, o.brokerPort, o.haPort,
                    new File(o.store).getAbsoluteFile(), o.brokerProperties, false);
                masterStopped = false;
                return "start-master broker=127.0.0.1:" + o.brokerPort;
            }
            case "start-slave": {
                if (words.length < 5) {
                    throw new IllegalArgumentException("usage: start-slave NAME PORT HA_PORT STORE [key=value ...]");
                }
                String name = words[1];
                if (slaves.containsKey(name)) {
                    throw new IllegalStateException("a slave of " + name + " is already running");
                }
                Properties props = keyValues(words, 5);
                int port = Integer.parseInt(words[2]);
                BrokerController slave = startBroker(name, 1L, port, Integer.parseInt(words[3]),
                    new File(words[4]).getAbsoluteFile(), props, true);
                slaves.put(name, slave);
                return "start-slave " + name + " broker=127.0.0.1:" + port;
            }
            case "stop-slave": {
                BrokerController slave = slaves.remove(words[1]);
                if (slave == null) {
                    throw new IllegalArgumentException("no slave of " + words[1] + " is running");
                }
                shutdownBroker(slave);
                return "stop-slave " + words[1];
            }
            case "start-broker": {
                if (words.length < 5) {
                    throw new IllegalArgumentException("usage: start-broker NAME PORT HA_PORT STORE [key=value ...]");
                }
                String name = words[1];
                if (others.containsKey(name) || name.equals(options.brokerName)) {
                    throw new IllegalStateException("a master named " + name + " is already running");
                }
                Properties props = keyValues(words, 5);
                int port = Integer.parseInt(words[2]);
                BrokerController b = startBroker(name, MixAll.MASTER_ID, port, Integer.parseInt(words[3]),
                    new File(words[4]).getAbsoluteFile(), props, false);
                others.put(name, b);
                return "start-broker " + name + " broker=127.0.0.1:" + port;
            }
            case "stop-broker": {
                BrokerController b = others.remove(words[1]);
                if (b == null) {
                    throw new IllegalArgumentException("no broker " + words[1] + " was started by start-broker");
                }
                shutdownBroker(b);
                return "stop-broker " + words[1];
            }
            default:
                throw new IllegalArgumentException("unknown command " + words[0]
                    + " (stop-master, start-master, start-slave, stop-slave, start-broker, stop-broker)");
        }
    }

    /** {@code words[from..]} as {@code key=value} properties (start-slave, start-broker). */
    private static Properties keyValues(String[] words, int from) {
        Properties props = new Properties();
        for (int i = from; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("not key=value: " + words[i]);
            }
            props.setProperty(words[i].substring(0, eq), words[i].substring(eq + 1));
        }
        return props;
    }

    private void start() throws Exception {
        Options o = options;
        File store = new File(o.store).getAbsoluteFile();
        if (!store.isDirectory() && !store.mkdirs()) {
            throw new IOException("cannot create store dir " + store);
        }
        checkKeys(o.brokerProperties, new Object[] {
            new BrokerConfig(), new NettyServerConfig(), new NettyClientConfig(), new MessageStoreConfig()});

        // 1. the name server, unless the master registers with another (--namesrv-addr)
        if (o.namesrvAddr == null) {
            startNamesrv(o, store);
        }

        // 2.-4. the master broker, unless this JVM is the name server alone (--no-broker)
        if (o.noBroker) {
            masterStopped = true;
            return;
        }
        broker = startBroker(o.brokerName, MixAll.MASTER_ID, o.brokerPort, o.haPort, store,
            o.brokerProperties, false);
    }

    private void startNamesrv(Options o, File store) throws Exception {
        NamesrvConfig namesrvConfig = new NamesrvConfig();
        namesrvConfig.setKvConfigPath(new File(store, "namesrv/kvConfig.json").getPath());
        namesrvConfig.setConfigStorePath(new File(store, "namesrv/namesrv.properties").getPath());
        NettyServerConfig namesrvNetty = new NettyServerConfig();
        checkKeys(o.namesrvProperties, new Object[] {namesrvConfig, namesrvNetty}, "name server");
        MixAll.properties2Object(o.namesrvProperties, namesrvConfig);
        MixAll.properties2Object(o.namesrvProperties, namesrvNetty);
        namesrvNetty.setListenPort(o.namesrvPort);
        namesrv = new NamesrvController(namesrvConfig, namesrvNetty);
        if (!namesrv.initialize()) {
            throw new IllegalStateException("NamesrvController.initialize() returned false");
        }
        namesrv.start();
    }

    /**
     * Build, start and wait for one broker: the master (id 0, its role from the properties) or
     * a slave (brokerId and brokerRole SLAVE forced).
     */
    private BrokerController startBroker(String name, long brokerId, int port, int haPort, File store,
                                         Properties properties, boolean slave) throws Exception {
        Options o = options;
        if (!store.isDirectory() && !store.mkdirs()) {
            throw new IOException("cannot create store dir " + store);
        }
        checkKeys(properties, new Object[] {
            new BrokerConfig(), new NettyServerConfig(), new NettyClientConfig(), new MessageStoreConfig()});
        String addr = o.namesrvAddr();
        // 2. the broker's four config beans: our small-store defaults, then the caller's
        //    properties, then what the harness relies on (ports, addresses, paths)
        BrokerConfig brokerConfig = new BrokerConfig();
        NettyServerConfig nettyServerConfig = new NettyServerConfig();
        NettyClientConfig nettyClientConfig = new NettyClientConfig();
        MessageStoreConfig storeConfig = new MessageStoreConfig();
        Object[] beans = {brokerConfig, nettyServerConfig, nettyClientConfig, storeConfig};

        // Commit-log files of 16 MiB (mqlab's MessageStoreConfig default; 4.9.3's is 1 GiB) keep
        // physical offsets comparable; consume-queue files keep 4.9.3's default (6,000,000 B, as
        // mqlab's). Files are mapped sparse, so only written pages use disk. The index file is
        // shrunk from ~420 MB (5,000,000 slots, 20,000,000 entries) to 4000 slots, 1000 entries.
        Properties defaults = new Properties();
        defaults.setProperty("mappedFileSizeCommitLog", String.valueOf(16 * 1024 * 1024));
        defaults.setProperty("maxIndexNum", "1000");
        defaults.setProperty("maxHashSlotNum", "4000");
        defaults.setProperty("diskMaxUsedSpaceRatio", "95");
        defaults.setProperty("waitTimeMillsInSendQueue", "3000");
        defaults.setProperty("osPageCacheBusyTimeOutMills", "5000");
        defaults.setProperty("namesrvAddr", addr);
        for (Object bean : beans) {
            MixAll.properties2Object(defaults, bean);
        }
        for (Object bean : beans) {
            MixAll.properties2Object(properties, bean);
        }
        brokerConfig.setBrokerName(name);
        brokerConfig.setBrokerClusterName(o.cluster);
        brokerConfig.setBrokerIP1("127.0.0.1");
        brokerConfig.setBrokerIP2("127.0.0.1"); // the HA address it registers (default: a non-loopback IP)
        if (slave) {
            brokerConfig.setBrokerId(brokerId);
            storeConfig.setBrokerRole(org.apache.rocketmq.store.config.BrokerRole.SLAVE);
        }
        // A DLedger node (enableDLegerCommitLog=true, with dLegerGroup, dLegerPeers, dLegerSelfId):
        // brokerId -1 until its election decides, as BrokerStartup#createBrokerController sets
        // it; DLedgerRoleChangeHandler then makes the leader brokerId 0 (SYNC_MASTER) and each
        // follower a SLAVE of brokerId (the number in its dLegerSelfId) + 1, and registers it.
        // Its DLedger RPC server listens on its own address in dLegerPeers.
        boolean dledger = storeConfig.isEnableDLegerCommitLog();
        if (dledger && !slave) {
            brokerConfig.setBrokerId(-1);
        }
        nettyServerConfig.setListenPort(port);
        storeConfig.setHaListenPort(haPort);
        storeConfig.setStorePathRootDir(store.getPath());
        storeConfig.setStorePathCommitLog(new File(store, "commitlog").getPath());
        // where UPDATE_BROKER_CONFIG persists (BrokerStartup points it at its -c file); a static:
        // the first master's own, as before any slave or other master
        if (!slave && name.equals(o.brokerName)) {
            BrokerPathConfigHelper.setBrokerConfigPath(new File(store, "config/broker.properties").getPath());
        }
        if (storeConfig.getMappedFileSizeCommitLog() <= storeConfig.getMaxMessageSize()) {
            throw new IllegalArgumentException("mappedFileSizeCommitLog must exceed maxMessageSize");
        }

        // 3. the broker, as BrokerStartup builds it (its properties remembered for GET_BROKER_CONFIG).
        //    With aclEnable, initialize() builds a PlainAccessValidator whose PlainPermissionManager
        //    reads ${rocketmq.home.dir}/conf/plain_acl.yml (and conf/acl/*.yml), the SYSTEM
        //    property (or ROCKETMQ_HOME) at that moment, not BrokerConfig#rocketmqHome: so the
        //    property is set to this broker's rocketmqHome for the call, and restored after.
        BrokerController b = new BrokerController(brokerConfig, nettyServerConfig, nettyClientConfig, storeConfig);
        b.getConfiguration().registerConfig(properties);
        String homeBefore = System.getProperty(MixAll.ROCKETMQ_HOME_PROPERTY);
        boolean aclHome = brokerConfig.isAclEnable() && properties.getProperty("rocketmqHome") != null;
        if (aclHome) {
            System.setProperty(MixAll.ROCKETMQ_HOME_PROPERTY, brokerConfig.getRocketmqHome());
        }
        boolean initialized;
        try {
            initialized = b.initialize();
        } finally {
            if (aclHome) {
                if (homeBefore == null) {
                    System.clearProperty(MixAll.ROCKETMQ_HOME_PROPERTY);
                } else {
                    System.setProperty(MixAll.ROCKETMQ_HOME_PROPERTY, homeBefore);
                }
            }
        }
        if (!initialized) {
            throw new IllegalStateException("BrokerController.initialize() returned false");
        }
        try {
            b.start();
        } catch (Exception e) {
            // BrokerController#start locks the store (DefaultMessageStore#start) before it binds
            // its ports: a lost port race must let go of that lock, or the retry on other ports
            // fails with OverlappingFileLockException in this JVM
            try {
                b.shutdown();
            } catch (Exception e2) {
                e.addSuppressed(e2);
            }
            throw e;
        }

        // 4. ready once our name server routes to the broker at 127.0.0.1:port (a master: with
        //    its topics, the topic named after the broker always among them); a slave registered
        //    with another name server is not waited for, nor a DLedger node (it registers only
        //    once its election has decided its role)
        String want = "127.0.0.1:" + port;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(o.readyTimeoutMs);
        boolean ours = namesrv != null && addr.equals(brokerConfig.getNamesrvAddr()) && !dledger;
        while (ours && (!want.equals(registeredAddr(name, brokerId))
            || (!slave && namesrv.getRouteInfoManager().pickupTopicRouteData(name) == null))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("broker " + name + " (id " + brokerId + ") not registered at "
                    + addr + " within " + o.readyTimeoutMs + " ms");
            }
            Thread.sleep(10);
        }

        // 5. and once StoreStatsService has taken its first sample (once a second): before that,
        //    GET_BROKER_RUNTIME_INFO (mqadmin clusterList, brokerStatus) fails with
        //    "java.util.NoSuchElementException" from LinkedList.getLast
        while (!runtimeInfoReady(b)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("broker runtime info not ready within "
                    + o.readyTimeoutMs + " ms");
            }
            Thread.sleep(20);
        }
        return b;
    }

    private static boolean runtimeInfoReady(BrokerController b) {
        try {
            b.getMessageStore().getRuntimeInfo();
            return true;
        } catch (java.util.NoSuchElementException e) {
            return false;
        }
    }

    private String registeredAddr(String brokerName, long brokerId) {
        byte[] body = namesrv.getRouteInfoManager().getAllClusterInfo();
        ClusterInfo info = ClusterInfo.decode(body, ClusterInfo.class);
        Map<String, BrokerData> table = info.getBrokerAddrTable();
        BrokerData data = table == null ? null : table.get(brokerName);
        return data == null ? null : data.getBrokerAddrs().get(brokerId);
    }

    private static Object field(Object target, Class<?> cls, String name) {
        try {
            java.lang.reflect.Field f = cls.getDeclaredField(name);
            f.setAccessible(true);
            return f.get(target);
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    private static void stopEventExecutor(Object remotingServer) {
        if (remotingServer == null) {
            return;
        }
        Object executor = field(remotingServer, NettyRemotingAbstract.class, "nettyEventExecutor");
        if (executor instanceof ServiceThread) {
            ((ServiceThread) executor).shutdown(true);
        }
    }

    /**
     * One broker's shutdown (it unregisters from the name server). Each NettyRemotingServer.shutdown()
     * joins its NettyEventExecutor, which sleeps in a 3 s poll between stop checks: 3 servers made a
     * stop take ~10 s. Stopping those threads first with an interrupt (they only relay channel
     * events to listeners we are shutting down anyway) brings it to ~1 s, the store's own sleep.
     * Returns false when the shutdown threw (printed).
     */
    private static boolean shutdownBroker(BrokerController b) {
        if (b == null) {
            return true;
        }
        stopEventExecutor(b.getRemotingServer());
        stopEventExecutor(field(b, BrokerController.class, "fastRemotingServer"));
        try {
            b.shutdown();
            return true;
        } catch (Throwable t) {
            System.err.println(TAG + ": broker shutdown failed: " + t);
            t.printStackTrace();
            return false;
        }
    }

    /**
     * Every key must name a setter on one of the beans, as properties2Object reads it: the key
     * of a one-argument method {@code setXyz} is its name after "set" with the first letter
     * lower-cased, so {@code setdLegerGroup} (MessageStoreConfig) takes {@code dLegerGroup}.
     */
    private static void checkKeys(Properties p, Object[] beans) {
        checkKeys(p, beans, "broker");
    }

    private static void checkKeys(Properties p, Object[] beans, String what) {
        java.util.Set<String> known = new java.util.HashSet<>();
        for (Object bean : beans) {
            for (Method m : bean.getClass().getMethods()) {
                String mn = m.getName();
                if (mn.startsWith("set") && mn.length() > 3 && m.getParameterCount() == 1) {
                    known.add(mn.substring(3, 4).toLowerCase() + mn.substring(4));
                }
            }
        }
        List<String> unknown = new ArrayList<>();
        for (String key : p.stringPropertyNames()) {
            boolean found = known.contains(key);
            if (!found) {
                unknown.add(key);
            }
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("no " + what + " config field named " + unknown);
        }
    }

    /**
     * Broker first (it unregisters from the name server), then the name server; idempotent.
     * Returns false when a shutdown threw (it is printed; the rest still shuts down). On JDK 17
     * without {@code --add-opens java.base/java.nio=ALL-UNNAMED} the store's shutdown throws
     * InaccessibleObjectException from MappedFile.clean.
     */
    private synchronized boolean stop() {
        if (stopped) {
            return stopOk;
        }
        stopped = true;
        // slaves first: a master that goes first leaves its slaves reconnecting
        for (BrokerController slave : slaves.values()) {
            stopOk &= shutdownBroker(slave);
        }
        slaves.clear();
        for (BrokerController other : others.values()) {
            stopOk &= shutdownBroker(other);
        }
        others.clear();
        if (!masterStopped) {
            masterStopped = true;
            stopOk &= shutdownBroker(broker);
        }
        if (namesrv != null) {
            stopEventExecutor(namesrv.getRemotingServer());
        }
        if (namesrv != null) {
            try {
                namesrv.shutdown();
            } catch (Throwable t) {
                stopOk = false;
                System.err.println(TAG + ": name server shutdown failed: " + t);
                t.printStackTrace();
            }
        }
        System.out.print(TAG + (stopOk ? " stopped" : " stopped with errors") + "\n");
        System.out.flush();
        return stopOk;
    }
}
