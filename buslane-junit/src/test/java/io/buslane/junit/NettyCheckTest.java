package io.buslane.junit;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

class NettyCheckTest {

    @Test
    void theNetty42LineIsAccepted() {
        assertThat(NettyCheck.problem(Map.of("netty-common", "4.2.12.Final", "netty-transport", "4.2.12.Final",
                "netty-tcnative-boringssl-static", "2.0.75.Final"))).isNull();
    }

    @Test
    void aMixWithNetty41NamesTheArtifactsAndTheFix() {
        // what Maven's nearest-wins gives a project that depends on buslane-junit and the SDK without netty-bom
        String problem = NettyCheck.problem(Map.of("netty-common", "4.1.137.Final",
                "netty-transport", "4.2.12.Final", "netty-handler", "4.1.137.Final"));
        assertThat(problem).contains("has {netty-common=4.1.137.Final, netty-handler=4.1.137.Final} next to")
                .contains("io.netty:netty-bom:4.2.12.Final", "docs/embedded.md");
    }

    @Test
    void thisModulesClassPathPasses() {
        assertThatCode(NettyCheck::requireNetty42).doesNotThrowAnyException();
    }
}
