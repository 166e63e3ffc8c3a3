package org.mqlab.interop;

import io.openmessaging.storage.dledger.client.DLedgerClient;
import io.openmessaging.storage.dledger.entry.DLedgerEntry;
import io.openmessaging.storage.dledger.protocol.DLedgerResponseCode;
import io.openmessaging.storage.dledger.protocol.GetEntriesResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * DLedger 0.2.3's own client against a DLedger broker group: scenario {@code dledger-client} of
 * {@link JavaScenarios}.
 *
 * <p>The group and its peers come from the environment ({@code MQLAB_DLEDGER_GROUP}, and
 * {@code MQLAB_DLEDGER_PEERS} as {@code dLegerPeers} writes them). {@code DLedgerClient} asks
 * every peer METADATA to learn the leader (its first guess is the first peer it lists) and
 * sends GET there. A GET to a dead peer comes back INTERNAL_ERROR, as for any user of it (or
 * METADATA_ERROR, or NOT_LEADER, while no METADATA answer has named the leader), and is asked
 * again a second later (ten times at most). Prints the answers to GET 0 and to a GET
 * past the log: codes, leader, and each entry's fields with its body's length.
 */
final class DLedgerClientScenario {
    private DLedgerClientScenario() {
    }

    static Map<String, Object> run() throws Exception {
        String group = System.getenv("MQLAB_DLEDGER_GROUP");
        String peers = System.getenv("MQLAB_DLEDGER_PEERS");
        if (group == null || peers == null) {
            throw new IllegalArgumentException("MQLAB_DLEDGER_GROUP and MQLAB_DLEDGER_PEERS must be set");
        }
        DLedgerClient client = new DLedgerClient(group, peers);
        client.startup();
        try {
            int tries = 0;
            GetEntriesResponse first;
            do {
                if (tries > 0) {
                    Thread.sleep(1000);
                }
                first = client.get(0);
                tries++;
            } while (notYet(first.getCode()) && tries < 10);
            GetEntriesResponse past = client.get(1_000_000L);
            return JavaScenarios.map("get0", answer(first), "getPast", answer(past), "tries", tries);
        } finally {
            client.shutdown();
        }
    }

    /** What the client answers while it has not found the leader yet: the RPC failed (a dead
     *  peer), no METADATA answer named a leader within 1.5 s, or a follower's NOT_LEADER. */
    static boolean notYet(int code) {
        return code == DLedgerResponseCode.INTERNAL_ERROR.getCode()
            || code == DLedgerResponseCode.METADATA_ERROR.getCode()
            || code == DLedgerResponseCode.NOT_LEADER.getCode();
    }

    static Map<String, Object> answer(GetEntriesResponse r) {
        List<Map<String, Object>> entries = new ArrayList<>();
        for (DLedgerEntry e : r.getEntries()) {
            entries.add(JavaScenarios.map(
                "index", e.getIndex(), "term", e.getTerm(), "magic", e.getMagic(), "pos", e.getPos(),
                "size", e.getSize(), "channel", e.getChannel(), "bodyLength", e.getBody().length));
        }
        return JavaScenarios.map("code", r.getCode(), "leaderId", r.getLeaderId(), "group", r.getGroup(),
            "entries", entries);
    }
}
