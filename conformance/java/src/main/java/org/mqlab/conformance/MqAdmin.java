package org.mqlab.conformance;

import org.apache.rocketmq.tools.command.MQAdminStartup;

/**
 * {@code mqadmin} as RocketMQ 4.9.3 ships it ({@code MQAdminStartup.main}), then an immediate exit.
 *
 * <p>{@code MQAdminStartup} runs the command and shuts its admin client down, but the JVM then
 * lingers ~2-3 s while Netty's event loops finish their graceful-shutdown quiet period. The
 * command's work and output are complete when {@code main0} returns, so we exit right there. The
 * exit status stays what {@code MQAdminStartup} gives: 0, even when the command failed (it prints
 * the error).
 */
public final class MqAdmin {
    private MqAdmin() {
    }

    public static void main(String[] args) {
        MQAdminStartup.main(args);
        System.out.flush();
        System.err.flush();
        System.exit(0);
    }
}
