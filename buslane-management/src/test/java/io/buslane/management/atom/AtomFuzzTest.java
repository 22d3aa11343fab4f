package io.buslane.management.atom;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.buslane.common.error.BrokerException;
import io.buslane.engine.entity.QueueProperties;
import io.buslane.engine.entity.RuleProperties;
import io.buslane.engine.entity.SubscriptionProperties;
import io.buslane.engine.entity.TopicProperties;
import io.buslane.engine.filter.RuleSet;
import org.w3c.dom.Element;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Coverage-guided fuzzing of the ATOM management API's parsers, as {@code AdminService} runs them on a request: the
 * path ({@link AdminPath#parse}), the ATOM entry and the entity description inside it
 * ({@link AtomReader}, {@link DescriptionReader}, {@link RuleReader}) on create and on update, and the SQL of the
 * rules it carries ({@link RuleSet#validate}).
 *
 * <p>Input: the raw request path on the first line (a query after {@code ?} is ignored), then the body. Invariant:
 * nothing escapes but the module's documented client errors, {@link IllegalArgumentException} (400) and a
 * {@link BrokerException} of a 4xx kind; no other exception, no stack overflow, bounded time and memory.
 *
 * <p>Seeds: the requests of the official Java admin client ({@code ServiceBusAdministrationClient}, 7.17.20)
 * recorded on the wire (see {@code docs/fuzzing.md}), in {@code AtomFuzzTestInputs/request/}.
 */
class AtomFuzzTest {

    @FuzzTest(maxDuration = "8s")
    void request(byte[] input) {
        int newline = indexOf(input, (byte) '\n');
        String rawPath = newline < 0 ? "/" : new String(input, 0, newline, StandardCharsets.UTF_8);
        byte[] body = newline < 0 ? input : Arrays.copyOfRange(input, newline + 1, input.length);
        int query = rawPath.indexOf('?');
        try {
            AdminPath.parse(query < 0 ? rawPath : rawPath.substring(0, query));
        } catch (IllegalArgumentException badRequest) {
            // 400
        }
        try {
            description(body);
        } catch (IllegalArgumentException badRequest) {
            // 400
        } catch (BrokerException e) {
            if (e.kind().httpStatus() >= 500) {
                throw e;
            }
        }
    }

    private static void description(byte[] body) {
        Element d = AtomReader.description(body);
        switch (d.getLocalName()) {
            case "QueueDescription" -> {
                DescriptionReader.queue("q", d, null);
                DescriptionReader.queue("q", d, QueueProperties.builder("q").build());
            }
            case "TopicDescription" -> {
                DescriptionReader.topic("t", d, null);
                DescriptionReader.topic("t", d, TopicProperties.builder("t").build());
            }
            case "SubscriptionDescription" -> {
                DescriptionReader.subscription("t", "s", d, null);
                DescriptionReader.subscription("t", "s", d, SubscriptionProperties.builder("t", "s").build());
                for (RuleProperties rule : DescriptionReader.defaultRules(d)) {
                    RuleSet.validate(rule);
                }
            }
            case "RuleDescription" -> RuleSet.validate(RuleReader.rule(d, "r"));
            default -> DescriptionReader.requireKind(d, "QueueDescription");
        }
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
