package io.buslane.testcontainers;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What a BuslaneContainer asks for before it starts (the running container is tested in buslane-container-tests). */
class BuslaneContainerConfigurationTest {

    @Test
    void exposesAmqpAndHttp() {
        try (BuslaneContainer c = new BuslaneContainer("localhost/buslane:test")) {
            assertThat(c.getExposedPorts()).containsExactly(5672, 5300);
        }
    }
}
