package io.buslane.server.cluster;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RendezvousTest {

    private static Map<Integer, String> place(int shards, List<String> nodes) {
        Map<Integer, String> out = new HashMap<>();
        for (int k = 0; k < shards; k++) {
            out.put(k, Rendezvous.owner(k, nodes));
        }
        return out;
    }

    @Test
    void aJoiningNodeTakesShardsOnlyForItselfAndALeavingNodeGivesOnlyItsOwn() {
        List<String> three = List.of("node-a", "node-b", "node-c");
        Map<Integer, String> before = place(64, three);
        Map<Integer, String> joined = place(64, List.of("node-a", "node-b", "node-c", "node-d"));
        for (int k = 0; k < 64; k++) {
            if (!before.get(k).equals(joined.get(k))) {
                assertThat(joined.get(k)).isEqualTo("node-d");
            }
        }
        Map<Integer, String> left = place(64, List.of("node-a", "node-c"));
        for (int k = 0; k < 64; k++) {
            if (!before.get(k).equals("node-b")) {
                assertThat(left.get(k)).isEqualTo(before.get(k));
            }
        }
    }

    @Test
    void shardsSpreadOverTheNodesAndTheAnswerDoesNotDependOnTheirOrder() {
        Map<Integer, String> a = place(300, List.of("n1", "n2", "n3"));
        Map<Integer, String> b = place(300, List.of("n3", "n1", "n2"));
        assertThat(a).isEqualTo(b);
        Map<String, Integer> counts = new HashMap<>();
        a.values().forEach(n -> counts.merge(n, 1, Integer::sum));
        assertThat(counts).hasSize(3);
        assertThat(counts.values()).allSatisfy(c -> assertThat(c).isBetween(70, 130));
        assertThat(Rendezvous.owner(0, List.of())).isNull();
    }
}
