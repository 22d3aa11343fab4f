package io.buslane.common.auth;

import io.buslane.common.error.BrokerException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
        "sb://localhost/$management                      | //localhost/$management",
        "sb://localhost/queue.1?timeout=5#x              | //localhost/queue.1",
        "queue.1                                         | queue.1",
        "/queue.1                                        | queue.1",
        "/Topic/Subscriptions/Sub/$DeadLetterQueue/      | topic/subscriptions/sub/$deadletterqueue",
        "queue.1/$management                             | queue.1",
        "//localhost/queue.1                             | //localhost/queue.1",
        "sb://localhost/caf%C3%A9                        | //localhost/caf%c3%a9",
        "sb://localhost/a+b                              | //localhost/a+b",
        "sb://localhost/bad%zz                           | //localhost/bad%zz",
        "/                                               | ''",
        "''                                              | ''",
    })
    void normalizes(String input, String expected) {
        assertThat(Audience.normalize(input)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "amqp%3A%2F%2Flocalhost%2Fqueue.1                | //localhost/queue.1",
        "amqps%3a%2f%2fLOCALHOST%2f                      | //localhost",
        "sb%3a%2f%2flocalhost%2fcaf%C3%A9                | //localhost/café",
        "sb://localhost/caf%C3%A9                        | //localhost/café",
        "sb://localhost/a%2541                           | //localhost/a%41",
        "sb://localhost/a%2Bb                            | //localhost/a+b",
        "sb://localhost/bad%zz                           | //localhost/bad%zz",
        "sb%3a%2f%2flocalhost%2fq%2f%24management        | //localhost/q",
        "sb%3a%2f%2flocalhost%2f%24management            | //localhost/$management",
    })
    void aTokensResourceIsDecodedOnceThenParsed(String sr, String expected) {
        assertThat(Audience.ofResource(sr).toString()).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "sb://localhost/queue.1/x://y/myqueue",
        "queue.1/x://y/myqueue",
        "/Topic//Subscriptions/Sub",
        "queue.1//x",
        "queue.1/../myqueue",
        "queue.1/./myqueue",
        "subscriptions/s",
        "queue.1/$deadletterqueue/x",
        "q/$cbs",
        "'a b'",
    })
    void refusesWhatDoesNotCanonicalise(String address) {
        assertThatThrownBy(() -> Audience.parse(address)).isInstanceOf(BrokerException.class)
                .hasMessageContaining("is not a valid entity address");
        assertThatThrownBy(() -> Audience.ofResource(address)).isInstanceOf(AuthException.class)
                .hasMessageStartingWith("InvalidAudience: ");
    }

    @Test
    void anEntityRulesScopeCoversExactlyItsEntity() {
        Audience team = Audience.parse("sb://localhost/team");

        assertThat(team.coversEntity(Audience.parse("team"))).isTrue();
        assertThat(team.coversEntity(Audience.parse("Team/$DeadLetterQueue"))).isTrue();
        assertThat(team.coversEntity(Audience.parse("team/Subscriptions/s/$Transfer/$DeadLetterQueue"))).isTrue();
        assertThat(team.coversEntity(Audience.parse("team/$management"))).isTrue();
        assertThat(team.coversEntity(Audience.parse("team/secret"))).isFalse();
        assertThat(team.coversEntity(Audience.parse("team/secret/Subscriptions/s"))).isFalse();
        assertThat(team.coversEntity(Audience.parse("teams"))).isFalse();
        assertThat(team.covers(Audience.parse("team/secret"))).isTrue(); // a namespace rule's token covers by path
        assertThat(Audience.parse("a/b").coversEntity(Audience.parse("a/b/Subscriptions/s"))).isTrue();
        assertThat(Audience.parse("a/b/Subscriptions/s").coversEntity(Audience.parse("a/b/Subscriptions/t")))
                .isFalse();
        assertThat(Audience.parse("").coversEntity(Audience.parse("a"))).isFalse();
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
        "//localhost/$management | //localhost/queue.1                              | false",
        "//localhost/$management | //localhost/$management                          | true",
    })
    void covers(String scope, String target, boolean expected) {
        assertThat(Audience.covers(scope, target)).isEqualTo(expected);
    }

    @Test
    void coversDoesNotDecodeAgain() {
        String scope = Audience.ofResource("sb://localhost/a%2541").toString();

        assertThat(Audience.covers(scope, "sb://localhost/a%41")).isTrue();
        assertThat(Audience.covers(scope, "sb://localhost/aA")).isFalse();
    }

    @Test
    void anAdministrationCollectionIsAScopeThatCoversExactlyItself() {
        Audience queues = Audience.ofResource("https%3a%2f%2flocalhost%3a5300%2f%24resources%2fqueues%3fapi-version"
                + "%3d2021-05%26%2524skip%3d0%26%2524top%3d10");
        assertThat(queues.collection()).isTrue();
        assertThat(queues.covers(Audience.parseScope("$Resources/Queues"))).isTrue();
        assertThat(queues.covers(Audience.parseScope("$Resources/Topics"))).isFalse();
        assertThat(queues.covers(Audience.parse("queue.1"))).isFalse();
        assertThat(queues.covers(Audience.parse(""))).isFalse();

        Audience subs = Audience.ofResource("sb://localhost/Shop/Subscriptions?api-version=2021-05");
        assertThat(subs.covers(Audience.parseScope("shop/subscriptions"))).isTrue();
        assertThat(subs.covers(Audience.parse("shop"))).as("not the topic itself").isFalse();
        assertThat(subs.covers(Audience.parse("shop/Subscriptions/s"))).as("nor a subscription").isFalse();
        assertThat(Audience.parse("shop").covers(Audience.parseScope("shop/Subscriptions"))).isTrue();
        assertThat(Audience.parse("").covers(Audience.parseScope("$resources/queues"))).isTrue();
        assertThat(Audience.parse("shop").covers(Audience.parseScope("$resources/queues"))).isFalse();
        assertThat(Audience.parse("shop").coversEntity(Audience.parseScope("shop/Subscriptions/s/Rules"))).isTrue();
        assertThat(Audience.parseScope("$namespaceinfo").covers(Audience.parseScope("$namespaceinfo"))).isTrue();
        // a link address or CBS audience cannot name a collection
        assertThatThrownBy(() -> Audience.parse("shop/Subscriptions")).isInstanceOf(BrokerException.class);
        assertThatThrownBy(() -> Audience.parseScope("$resources/secrets")).isInstanceOf(BrokerException.class);
        assertThatThrownBy(() -> Audience.parseScope("shop/$DeadLetterQueue/Subscriptions"))
                .isInstanceOf(BrokerException.class);
    }
}
