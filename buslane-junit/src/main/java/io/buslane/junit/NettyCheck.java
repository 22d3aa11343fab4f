package io.buslane.junit;

import io.netty.util.Version;

import java.util.Map;
import java.util.TreeMap;

/**
 * Stateless. Fails early, with the fix, when the class path mixes Netty 4.1 artifacts (the Service Bus SDK's HTTP
 * client asks for them) with the broker's Netty 4.2: Maven's nearest-wins mediation produces such a mix, and the
 * broker would otherwise fail deep inside Vert.x with {@code NoClassDefFoundError:
 * io/netty/util/concurrent/ThreadAwareExecutor}. docs/embedded.md, "Classpath".
 */
final class NettyCheck {

    private NettyCheck() {
    }

    /** Throws {@link IllegalStateException} if the Netty artifacts on the class path are not all of the 4.2 line. */
    static void requireNetty42() {
        Map<String, String> versions = new TreeMap<>();
        for (Map.Entry<String, Version> e : Version.identify(NettyCheck.class.getClassLoader()).entrySet()) {
            versions.put(e.getKey(), e.getValue().artifactVersion());
        }
        String problem = problem(versions);
        if (problem != null) {
            throw new IllegalStateException(problem);
        }
    }

    /**
     * What is wrong with these Netty artifact versions (artifact id to version), or null when every Netty artifact
     * (netty-tcnative, versioned on its own, aside) is of the 4.2 line.
     */
    static String problem(Map<String, String> versions) {
        Map<String, String> wrong = new TreeMap<>();
        Map<String, String> right = new TreeMap<>();
        versions.forEach((artifact, version) -> {
            if (!artifact.contains("tcnative") && !version.startsWith("4.2.")) {
                wrong.put(artifact, version);
            } else {
                right.put(artifact, version);
            }
        });
        if (wrong.isEmpty()) {
            return null;
        }
        return "The embedded Buslane broker needs Netty 4.2, but the class path has " + wrong + " next to "
                + right + ". Import io.netty:netty-bom:4.2.12.Final (Maven: in "
                + "<dependencyManagement>, <type>pom</type>, <scope>import</scope>; Gradle: platform(...); Spring "
                + "Boot's parent: <netty.version>4.2.12.Final</netty.version>). The Service Bus SDK runs on it too: "
                + "see docs/embedded.md, \"Classpath: Netty 4.2\".";
    }
}
