package org.mqlab.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.Permission;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.tools.command.MQAdminStartup;

/**
 * {@code mqadmin} as RocketMQ 4.9.3 ships it ({@code MQAdminStartup.main}), then an immediate exit.
 *
 * <p>{@code MQAdminStartup} runs the command and shuts its admin client down, but the JVM then
 * lingers ~2-3 s while Netty's event loops finish their graceful-shutdown quiet period. The
 * command's work and output are complete when {@code main0} returns, so we exit right there. The
 * exit status stays what {@code MQAdminStartup} gives: 0, even when the command failed (it prints
 * the error).
 *
 * <p>{@code MqAdmin --batch} runs many commands in one JVM: it reads one command a line from stdin
 * (its arguments separated by TAB), runs it with {@code MQAdminStartup.main}, and then prints
 * {@code BATCH_END + " " + status} on stdout and on stderr. The status is 0, or the status a
 * command asked {@code System.exit} for: in 4.9.3 only {@code ServerUtil#parseCmdLine} exits (1 on
 * bad options, 0 after {@code -h}); that call is stopped by a security manager and the next line
 * runs. Each command builds and shuts down its own admin client, as in its own JVM.
 */
public final class MqAdmin {
    /** Printed after each command of a batch. */
    public static final String BATCH_END = "@@mqlab-mqadmin-end";

    private MqAdmin() {
    }

    /** The status the running command last asked System.exit for (-1: none). */
    private static volatile int exitStatus = -1;

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--batch")) {
            batch();
            return;
        }
        MQAdminStartup.main(args);
        System.out.flush();
        System.err.flush();
        System.exit(0);
    }

    @SuppressWarnings("removal")
    static void batch() throws Exception {
        System.setSecurityManager(new SecurityManager() {
            @Override
            public void checkPermission(Permission perm) {
            }

            @Override
            public void checkPermission(Permission perm, Object context) {
            }

            @Override
            public void checkExit(int status) {
                // MQAdminStartup#main0 catches every Exception and prints it: remember the status
                exitStatus = status;
                throw new SecurityException("mqadmin: System.exit(" + status + ") stopped in --batch");
            }
        });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            List<String> parts = new ArrayList<>();
            for (String p : line.split("\t", -1)) {
                parts.add(p);
            }
            if (line.isEmpty()) {
                parts.clear();
            }
            int status = 0;
            exitStatus = -1;
            try {
                MQAdminStartup.main(parts.toArray(new String[0]));
            } catch (Throwable t) {
                t.printStackTrace();
                status = 1;
            }
            if (exitStatus >= 0) {
                status = exitStatus;
            }
            System.out.flush();
            System.err.println(BATCH_END + " " + status);
            System.err.flush();
            System.out.println(BATCH_END + " " + status);
            System.out.flush();
        }
        Runtime.getRuntime().halt(0);
    }
}
