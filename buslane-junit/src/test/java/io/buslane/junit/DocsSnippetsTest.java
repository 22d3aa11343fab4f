package io.buslane.junit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/embedded.md shows the example test classes verbatim: each one's imports, then everything after its
 * {@code // docs/embedded.md} marker line. Fails when a test or the page changes without the other.
 */
class DocsSnippetsTest {

    static final Path DOC = Path.of("..", "docs", "embedded.md");
    static final Path EXAMPLES = Path.of("src", "test", "java", "io", "buslane", "junit", "examples");

    /** The snippet of a test class as the page shows it. */
    static String snippet(Path source) throws IOException {
        List<String> lines = Files.readAllLines(source);
        int firstImport = -1;
        int lastImport = -1;
        int marker = -1;
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.startsWith("import ")) {
                firstImport = firstImport < 0 ? i : firstImport;
                lastImport = i;
            }
            if (l.startsWith("// docs/embedded.md")) {
                marker = i;
            }
        }
        assertThat(marker).as("the marker line of " + source).isPositive();
        String imports = String.join("\n", lines.subList(firstImport, lastImport + 1));
        String body = String.join("\n", lines.subList(marker + 1, lines.size())).stripTrailing();
        return imports + "\n\n" + body;
    }

    @ParameterizedTest
    @ValueSource(strings = {"DurableExampleTest", "DeclarativeExampleTest", "ConfigFileExampleTest",
        "ProgrammaticExampleTest", "SpringBootExampleTest"})
    void thePageShowsTheTest(String testClass) throws IOException {
        String page = Files.readString(DOC);
        String snippet = snippet(EXAMPLES.resolve(testClass + ".java"));
        assertThat(page).as("docs/embedded.md shows " + testClass + ".java").contains("```java\n" + snippet + "\n```");
    }
}
