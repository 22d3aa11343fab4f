package io.buslane.management.atom;

import io.buslane.common.auth.Right;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the service answers that the SDKs' own live tests check (#32): a partitioned entity's size as its
 * partitions' sum, an authorization rule's rights in the order sent, a subscription's rules in name order.
 */
class ServiceEchoApiTest {

    private static final String Q = "/a:entry/a:content/sb:QueueDescription/";
    private static final String T = "/a:entry/a:content/sb:TopicDescription/";

    static AdminTestServer server;

    @BeforeAll
    static void start() throws Exception {
        server = AdminTestServer.acceptingAll();
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void aPartitionedEntitysSizeIsReportedAsItsPartitionsSumAndReadBackAsAPartitions() {
        HttpResponse<String> created = server.put("/partitioned-size", AdminTestServer.entry("QueueDescription",
                "<MaxSizeInMegabytes>1024</MaxSizeInMegabytes><EnablePartitioning>true</EnablePartitioning>"));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        assertThat(TestXml.parse(server.get("/partitioned-size").body()).text(Q + "sb:MaxSizeInMegabytes"))
                .isEqualTo("16384");
        assertThat(server.engine.queue("partitioned-size").properties().maxSizeInMegabytes()).isEqualTo(1024);
        // an update that sends back the size it read keeps 1,024 MB a partition
        HttpResponse<String> updated = server.update("/partitioned-size", AdminTestServer.entry("QueueDescription",
                "<MaxSizeInMegabytes>16384</MaxSizeInMegabytes><EnablePartitioning>true</EnablePartitioning>"));
        assertThat(updated.statusCode()).as(updated.body()).isEqualTo(200);
        assertThat(server.engine.queue("partitioned-size").properties().maxSizeInMegabytes()).isEqualTo(1024);
        // a size the service does not offer round-trips too: 100 MB reads back as 1,600, and 1,600 sent back is 100
        server.put("/partitioned-odd", AdminTestServer.entry("QueueDescription",
                "<MaxSizeInMegabytes>100</MaxSizeInMegabytes><EnablePartitioning>true</EnablePartitioning>"));
        for (int i = 0; i < 2; i++) {
            assertThat(server.update("/partitioned-odd", AdminTestServer.entry("QueueDescription",
                    "<MaxSizeInMegabytes>1600</MaxSizeInMegabytes><EnablePartitioning>true</EnablePartitioning>"))
                    .statusCode()).isEqualTo(200);
            assertThat(server.engine.queue("partitioned-odd").properties().maxSizeInMegabytes()).isEqualTo(100);
        }
        // not partitioned: as given
        server.put("/plain-size", AdminTestServer.entry("QueueDescription",
                "<MaxSizeInMegabytes>2048</MaxSizeInMegabytes>"));
        assertThat(TestXml.parse(server.get("/plain-size").body()).text(Q + "sb:MaxSizeInMegabytes"))
                .isEqualTo("2048");
        server.put("/partitioned-topic", AdminTestServer.entry("TopicDescription",
                "<MaxSizeInMegabytes>5120</MaxSizeInMegabytes><EnablePartitioning>true</EnablePartitioning>"));
        assertThat(TestXml.parse(server.get("/partitioned-topic").body()).text(T + "sb:MaxSizeInMegabytes"))
                .isEqualTo("81920");
    }

    @Test
    void anAuthorizationRulesRightsComeBackInTheOrderSent() {
        HttpResponse<String> created = server.put("/rights-order", AdminTestServer.entry("QueueDescription",
                "<AuthorizationRules><AuthorizationRule i:type=\"SharedAccessAuthorizationRule\">"
                        + "<ClaimType>SharedAccessKey</ClaimType><ClaimValue>None</ClaimValue><Rights>"
                        + "<AccessRights>Manage</AccessRights><AccessRights>Send</AccessRights>"
                        + "<AccessRights>Listen</AccessRights></Rights><KeyName>all</KeyName>"
                        + "</AuthorizationRule></AuthorizationRules>"));
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        assertThat(TestXml.parse(server.get("/rights-order").body())
                .texts(Q + "sb:AuthorizationRules/sb:AuthorizationRule/sb:Rights/sb:AccessRights"))
                .containsExactly("Manage", "Send", "Listen");
        assertThat(server.engine.queue("rights-order").properties().authorizationRules().get(0).rights())
                .containsExactly(Right.MANAGE, Right.SEND, Right.LISTEN);
    }

    @Test
    void aSubscriptionsRulesAreListedInNameOrder() {
        server.put("/rule-order", AdminTestServer.entry("TopicDescription", ""));
        server.put("/rule-order/Subscriptions/s", AdminTestServer.entry("SubscriptionDescription", ""));
        for (String name : new String[] {"zeta", "alpha", "mid"}) {
            HttpResponse<String> r = server.put("/rule-order/Subscriptions/s/Rules/" + name,
                    AdminTestServer.entry("RuleDescription", "<Filter i:type=\"TrueFilter\">"
                            + "<SqlExpression>1=1</SqlExpression></Filter><Name>" + name + "</Name>"));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        }
        TestXml feed = TestXml.parse(server.get("/rule-order/Subscriptions/s/Rules").body());
        assertThat(feed.texts("/a:feed/a:entry/a:title")).containsExactly("$Default", "alpha", "mid", "zeta");
    }
}
