package io.buslane.management.atom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AdminPathTest {

    @Test
    void parsesEveryShape() {
        assertThat(AdminPath.parse("/")).isEqualTo(new AdminPath(AdminPath.Kind.ROOT, null, null, null));
        assertThat(AdminPath.parse("/$namespaceinfo").kind()).isEqualTo(AdminPath.Kind.NAMESPACE_INFO);
        assertThat(AdminPath.parse("/$Resources/Queues").kind()).isEqualTo(AdminPath.Kind.LIST_QUEUES);
        assertThat(AdminPath.parse("/$resources/topics").kind()).isEqualTo(AdminPath.Kind.LIST_TOPICS);
        assertThat(AdminPath.parse("/a/b/c")).isEqualTo(new AdminPath(AdminPath.Kind.ENTITY, "a/b/c", null, null));
        assertThat(AdminPath.parse("/a/b/subscriptions"))
                .isEqualTo(new AdminPath(AdminPath.Kind.SUBSCRIPTIONS, "a/b", null, null));
        assertThat(AdminPath.parse("/a/b/Subscriptions/s/"))
                .isEqualTo(new AdminPath(AdminPath.Kind.SUBSCRIPTION, "a/b", "s", null));
        assertThat(AdminPath.parse("/t/Subscriptions/s/rules"))
                .isEqualTo(new AdminPath(AdminPath.Kind.RULES, "t", "s", null));
        AdminPath rule = AdminPath.parse("/t/subscriptions/s/Rules/$Default");
        assertThat(rule).isEqualTo(new AdminPath(AdminPath.Kind.RULE, "t", "s", "$Default"));
        assertThat(rule.audiencePath()).isEqualTo("t/Subscriptions/s/Rules/$Default");
        assertThatThrownBy(() -> AdminPath.parse("/t/Subscriptions/s/x/y")).isInstanceOf(
                IllegalArgumentException.class);
    }

    @Test
    void decodesThePathOnceAndKeepsPlus() {
        assertThat(AdminPath.parse("/a%2Bb+c/%71")).isEqualTo(new AdminPath(AdminPath.Kind.ENTITY, "a+b+c/q", null,
                null));
        // the Java admin client escapes the '/' of entity names (azure-core's path escaper keeps no '/')
        assertThat(AdminPath.parse("/a%2Fb%2fc")).isEqualTo(new AdminPath(AdminPath.Kind.ENTITY, "a/b/c", null,
                null));
        assertThatThrownBy(() -> AdminPath.parse("/a%zz")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void refusesWhatDoesNotCanonicalise() {
        for (String path : new String[] {"/a%2F%2Fb", "/a/%2Fb", "/a//b", "/t/x://y/q", "/a/../b", "/a%2F..%2Fb",
            "/a/./b", "/a%3Fb", "/a%23b",
            "/q/$DeadLetterQueue", "/q/$management", "/Subscriptions/s", "/t/Subscriptions/$s"}) {
            assertThatThrownBy(() -> AdminPath.parse(path)).as(path).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
