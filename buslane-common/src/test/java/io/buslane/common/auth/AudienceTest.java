package io.buslane.common.auth;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class AudienceTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "sb://localhost/queue.1                          | //localhost/queue.1",
        "amqp://localhost/queue.1                        | //localhost/queue.1",
        "amqps://LocalHost/Queue.1/                      | //localhost/queue.1",
        "wss://localhost/queue.1                         | //localhost/queue.1",
        "https://localhost/queue.1                       | //localhost/queue.1",
        "sb://localhost/queue.1/$management              | //localhost/queue.1",
        "sb://localhost/queue.1/$Management/             | //localhost/queue.1",
        "sb://localhost:5672/queue.1                     | //localhost/queue.1",
        "sb://user:pw@localhost:5672/queue.1             | //localhost/queue.1",
        "amqps://[::1]:5671/queue.1                      | //[::1]/queue.1",
        "amqps://localhost/                              | //localhost",
        "amqps://localhost                               | //localhost",
        "sb://localhost/$management                      | //localhost",
        "sb://localhost/queue.1?timeout=5#x              | //localhost/queue.1",
        "queue.1                                         | queue.1",
        "/queue.1                                        | queue.1",
        "/Topic//Subscriptions/Sub/$DeadLetterQueue/     | topic/subscriptions/sub/$deadletterqueue",
        "queue.1/$management                             | queue.1",
        "//localhost/queue.1                             | //localhost/queue.1",
        "amqp%3A%2F%2Flocalhost%2Fqueue.1                | //localhost/queue.1",
        "amqps%3a%2f%2fLOCALHOST%2f                      | //localhost",
        "sb://localhost/caf%C3%A9                        | //localhost/café",
        "sb://localhost/a%2541                           | //localhost/a%41",
        "sb://localhost/a+b                              | //localhost/a+b",
        "sb://localhost/bad%zz                           | //localhost/bad%zz",
        "/                                               | ''",
        "''                                              | ''",
    })
    void normalizes(String input, String expected) {
        assertThat(Audience.normalize(input)).isEqualTo(expected);
    }

    @Test
    void parsesIntoHostAndPath() {
        Audience audience = Audience.parse("sb://LOCALHOST:5672/Topic.1/Subscriptions/S1");

        assertThat(audience.host()).isEqualTo("localhost");
        assertThat(audience.path()).isEqualTo("topic.1/subscriptions/s1");
        assertThat(audience.isNamespace()).isFalse();
        assertThat(Audience.parse("amqps://localhost/").isNamespace()).isTrue();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "//localhost/queue.1 | //localhost/queue.1                                  | true",
        "//localhost/queue.1 | sb://LOCALHOST/Queue.1/$management                   | true",
        "//localhost/queue.1 | //localhost/queue.1/$deadletterqueue                 | true",
        "//localhost/queue.1 | //localhost/queue.1/$transfer/$deadletterqueue       | true",
        "//localhost/queue.1 | queue.1/$DeadLetterQueue                             | true",
        "//localhost/queue.1 | //localhost/queue.10                                 | false",
        "//localhost/queue.1 | //localhost/queue.2                                  | false",
        "//localhost/queue.1 | //localhost                                          | false",
        "//localhost/queue.1 | //otherhost/queue.1                                  | false",
        "//localhost/topic   | //localhost/topic/subscriptions/sub/$deadletterqueue | true",
        "//localhost         | //localhost/anything/at/all                          | true",
        "//localhost         | //otherhost/queue.1                                  | false",
        "//localhost         | queue.1                                              | true",
        "queue.1             | //anyhost/queue.1/$management                        | true",
        "''                  | //anyhost/queue.1                                    | true",
        "topic/subscriptions | topic                                                | false",
    })
    void covers(String scope, String target, boolean expected) {
        assertThat(Audience.covers(scope, target)).isEqualTo(expected);
    }

    @Test
    void coversDoesNotDecodeAgain() {
        String scope = Audience.normalize("sb://localhost/a%2541");

        assertThat(Audience.covers(scope, Audience.normalize("sb://localhost/a%2541"))).isTrue();
        assertThat(Audience.covers(scope, "sb://localhost/aA")).isFalse();
    }
}
