package org.mqlab.experiments;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.log4j.ConsoleAppender;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;

/**
 * A one-machine YARN cluster: Hadoop's MiniYARNCluster with one ResourceManager and one
 * NodeManager, bound to the loopback interface on free ports.
 *
 * <pre>
 * java -cp ... org.mqlab.experiments.MiniYarn --conf-dir DIR --work-dir DIR
 *     [--memory-mb 4096] [--vcores 4] [--log-retain-seconds 0] [--log-level WARN]
 *     [--watch-stdin false]
 * </pre>
 *
 * <ol>
 *   <li>Starts the cluster with its working files (NodeManager local and log directories, the
 *       containers' working directories) under {@code --work-dir} (MiniYARNCluster puts them
 *       under the {@code test.build.data} directory, which is set to it).
 *   <li>Writes {@code core-site.xml} (the local file system as the default) and {@code
 *       yarn-site.xml} (the ResourceManager's addresses) into {@code --conf-dir}: a client with
 *       {@code HADOOP_CONF_DIR} there submits to this cluster.
 *   <li>Prints one line {@code mqlab-miniyarn ready rm=HOST:PORT webapp=HOST:PORT} on stdout.
 *   <li>Runs until SIGTERM or SIGINT (or, with {@code --watch-stdin true}, the end of its stdin),
 *       then stops the cluster (the NodeManager kills the containers still running).
 * </ol>
 *
 * The NodeManager offers {@code --memory-mb} and {@code --vcores} to containers; containers may be
 * as small as 128 MB; the virtual and physical memory checks are off (a JVM's virtual size is
 * far above its heap); the disk health checker accepts a full disk.
 */
public final class MiniYarn {
  static final String READY = "mqlab-miniyarn ready";
  static final String NAME = "mqlab-miniyarn";

  private MiniYarn() {}

  public static void main(String[] args) {
    try {
      run(parse(args));
    } catch (Throwable e) {
      // a failed start leaves non-daemon threads behind: end the JVM, not just main
      e.printStackTrace();
      Runtime.getRuntime().halt(1);
    }
  }

  private static void run(Map<String, String> opts) throws Exception {
    File confDir = new File(require(opts, "--conf-dir")).getAbsoluteFile();
    File workDir = new File(require(opts, "--work-dir")).getAbsoluteFile();
    int memoryMb = Integer.parseInt(opts.getOrDefault("--memory-mb", "4096"));
    int vcores = Integer.parseInt(opts.getOrDefault("--vcores", "4"));
    Logger root = Logger.getRootLogger();
    root.setLevel(Level.toLevel(opts.getOrDefault("--log-level", "WARN")));
    root.addAppender(new ConsoleAppender(new PatternLayout("%d{ISO8601} %p %c{1}: %m%n"),
        ConsoleAppender.SYSTEM_ERR));
    Files.createDirectories(confDir.toPath());
    Files.createDirectories(workDir.toPath());
    // MiniYARNCluster puts its directories under GenericTestUtils.getTestDir(): this property
    System.setProperty("test.build.data", workDir.getPath());

    YarnConfiguration conf = new YarnConfiguration();
    conf.set("hadoop.tmp.dir", new File(workDir, "tmp").getPath());
    conf.set("fs.defaultFS", "file:///");
    conf.set(YarnConfiguration.RM_BIND_HOST, "127.0.0.1");
    conf.set(YarnConfiguration.NM_BIND_HOST, "127.0.0.1");
    // MiniYARNCluster reads the NodeManager's memory from this key (default 4096)
    conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", memoryMb);
    conf.setInt(YarnConfiguration.NM_VCORES, vcores);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, memoryMb);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES, 1);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, vcores);
    conf.set(YarnConfiguration.RM_SCHEDULER,
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler");
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 100.0f);
    conf.setLong(YarnConfiguration.NM_MIN_PER_DISK_FREE_SPACE_MB, 0);
    conf.setBoolean(YarnConfiguration.TIMELINE_SERVICE_ENABLED, false);
    // a finished application's container logs are deleted after this long; the NodeManager's
    // stop waits up to 10 s for pending deletions, so the default (3 h) slows every stop
    conf.setLong(YarnConfiguration.NM_LOG_RETAIN_SECONDS,
        Long.parseLong(opts.getOrDefault("--log-retain-seconds", "0")));

    MiniYARNCluster cluster = new MiniYARNCluster(NAME, 1, 1, 1);
    Thread stopper = new Thread(() -> stop(cluster), "mqlab-miniyarn-stop");
    Runtime.getRuntime().addShutdownHook(stopper);
    cluster.init(conf);
    cluster.start();

    Configuration live = cluster.getConfig();
    long deadline = System.currentTimeMillis() + 60_000;
    while (live.get(YarnConfiguration.RM_ADDRESS, "").endsWith(":0")
        || !cluster.waitForNodeManagersToConnect(1000)) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the NodeManager did not register within 60 s");
      }
      Thread.sleep(100);
    }

    Configuration core = new Configuration(false);
    core.set("fs.defaultFS", "file:///");
    write(core, new File(confDir, "core-site.xml"));
    Configuration site = new Configuration(false);
    for (String key : new String[] {
        YarnConfiguration.RM_ADDRESS,
        YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS,
        YarnConfiguration.RM_ADMIN_ADDRESS,
        YarnConfiguration.RM_WEBAPP_ADDRESS}) {
      site.set(key, loopback(live.get(key)));
    }
    write(site, new File(confDir, "yarn-site.xml"));

    System.out.println(READY + " rm=" + site.get(YarnConfiguration.RM_ADDRESS)
        + " webapp=" + site.get(YarnConfiguration.RM_WEBAPP_ADDRESS));
    System.out.flush();

    if (Boolean.parseBoolean(opts.getOrDefault("--watch-stdin", "false"))) {
      // until stdin ends (the parent closed the pipe or died)
      InputStream in = System.in;
      byte[] buf = new byte[256];
      while (in.read(buf) >= 0) {
        // discard
      }
      System.exit(0);
    }
    Thread.currentThread().join(); // SIGTERM and SIGINT run the shutdown hook
  }

  private static void stop(MiniYARNCluster cluster) {
    try {
      cluster.stop();
    } catch (RuntimeException e) {
      e.printStackTrace();
    }
  }

  /** {@code localhost:PORT} (how MiniYARNCluster names its addresses) as {@code 127.0.0.1:PORT}. */
  private static String loopback(String address) {
    int colon = address.lastIndexOf(':');
    return "127.0.0.1" + address.substring(colon);
  }

  private static void write(Configuration conf, File target) throws IOException {
    File partial = new File(target.getPath() + ".part");
    try (OutputStream out = new FileOutputStream(partial)) {
      conf.writeXml(out);
    }
    Files.move(partial.toPath(), target.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --option value pairs, got " + args[i]);
      }
      opts.put(args[i], args[i + 1]);
    }
    return opts;
  }

  private static String require(Map<String, String> opts, String key) {
    String value = opts.get(key);
    if (value == null) {
      throw new IllegalArgumentException("missing " + key);
    }
    return value;
  }
}
