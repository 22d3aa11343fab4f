package io.buslane.journal.postgres;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PostgresOptionsTest {

    private static PostgresOptions parse(String url) {
        return PostgresOptions.parse(url, "node", Duration.ofSeconds(30), null);
    }

    @Test
    void parsesTheStorageUrl() {
        PostgresOptions o = parse("postgresql://bus%40lane:p%3Ass@db.example:6543/buslane?sslmode=require");
        assertThat(o.jdbcUrl()).isEqualTo("jdbc:postgresql://db.example:6543/buslane?sslmode=require");
        assertThat(o.user()).isEqualTo("bus@lane");
        assertThat(o.password()).isEqualTo("p:ss");
        assertThat(o.describe()).doesNotContain("p:ss");
    }

    @Test
    void defaultsThePortAndAcceptsPostgresAndJdbcSchemes() {
        assertThat(parse("postgres://u@h/db").jdbcUrl()).isEqualTo("jdbc:postgresql://h:5432/db");
        assertThat(parse("jdbc:postgresql://h:1/db").jdbcUrl()).isEqualTo("jdbc:postgresql://h:1/db");
        assertThat(parse("postgresql://h/db").user()).isNull();
    }

    @Test
    void refusesWhatIsNotAPostgresqlUrlWithoutEchoingThePassword() {
        assertThatThrownBy(() -> parse("mysql://u:secret@h/db")).hasMessageContaining("postgresql://");
        assertThatThrownBy(() -> parse("postgresql://u:secret@h")).hasMessageContaining("no database")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> PostgresOptions.parse("postgresql://h/db", "n", Duration.ofMillis(10), null))
                .hasMessageContaining("lease");
    }

    @Test
    void theDescriptionIsHostPortAndDatabaseOnlyAndRedactionHidesQuerySecrets() {
        PostgresOptions o = parse("postgresql://admin:s3cret@db.example:6543/buslane?password=q5ecret"
                + "&sslmode=verify-full");
        assertThat(o.describe()).isEqualTo("db.example:6543/buslane");
        String redacted = PostgresOptions.redact("postgresql://admin:s3cret@db.example/b?sslmode=require"
                + "&password=q5ecret&sslpassword=k3y");
        assertThat(redacted).doesNotContain("s3cret").doesNotContain("q5ecret").doesNotContain("k3y")
                .contains("sslmode=require").contains("password=***");
    }

    @Test
    void acceptsAListOfHostsAsPgjdbcDoesEachWithItsPort() {
        PostgresOptions o = parse("postgresql://u:p%40ss@pg-a:5433,pg-b,[fd00::2]:6000/buslane"
                + "?targetServerType=primary");
        assertThat(o.jdbcUrl()).isEqualTo("jdbc:postgresql://pg-a:5433,pg-b:5432,[fd00::2]:6000/buslane"
                + "?targetServerType=primary");
        assertThat(o.user()).isEqualTo("u");
        assertThat(o.password()).isEqualTo("p@ss");
        assertThat(o.describe()).isEqualTo("pg-a:5433,pg-b:5432,[fd00::2]:6000/buslane");
        assertThat(parse("jdbc:postgresql://h1:1,h2:2/db").jdbcUrl()).isEqualTo("jdbc:postgresql://h1:1,h2:2/db");
        assertThat(parse("postgresql://[::1]/db").jdbcUrl()).isEqualTo("jdbc:postgresql://[::1]:5432/db");
    }

    @Test
    void refusesAnEmptyHostOrABadPortInTheListWithoutEchoingThePassword() {
        assertThatThrownBy(() -> parse("postgresql://u:secret@h1,,h2/db")).hasMessageContaining("no host")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> parse("postgresql://u:secret@/db")).hasMessageContaining("no host");
        assertThatThrownBy(() -> parse("postgresql://u:secret@h1:5432,h2:x/db")).hasMessageContaining("port")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> parse("postgresql://h1:70000/db")).hasMessageContaining("port");
        assertThatThrownBy(() -> parse("postgresql://h1:0/db")).hasMessageContaining("port");
        assertThatThrownBy(() -> parse("postgresql://[::1/db")).hasMessageContaining("IPv6");
    }
}
