package io.buslane.containertests;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Podman for the container tests: the local JRE base image (dist/build-test-base.sh, cached), the Buslane image built
 * from the release archive with dist/Containerfile (once per test JVM), and podman's Docker-compatible socket for
 * Testcontainers. Without podman (or root) the tests skip, unless {@code BUSLANE_REQUIRE_PODMAN=1} (as {@code .ci/run}
 * sets it), which makes them fail instead.
 */
final class Podman {

    /** The Buslane image the tests build and start. */
    static final String IMAGE = "localhost/buslane:test";
    /** The locally made JRE base (no registry is reachable on the test machines). */
    static final String BASE_IMAGE = "localhost/buslane-jre17-base:test";
    private static final Path BASE_TARBALL = Path.of("/var/tmp/buslane-jre17-rootfs.tar");

    private static boolean imageBuilt;
    private static Process service;

    private Podman() {
    }

    /** Skips the calling test (fails it in CI) unless podman can run containers here. */
    static void require() {
        String why = null;
        if (!onPath("podman")) {
            why = "podman is not installed (apt-get install podman runc debootstrap)";
        } else if (!"root".equals(System.getProperty("user.name"))) {
            why = "the container tests build their base image with debootstrap, which needs root";
        }
        if (why != null) {
            if ("1".equals(System.getenv("BUSLANE_REQUIRE_PODMAN"))) {
                Assertions.fail(why + " (BUSLANE_REQUIRE_PODMAN=1 makes this a failure)");
            }
            Assumptions.abort(why);
        }
    }

    /** Builds the base (unless present) and the Buslane image from the release archive (once per JVM). */
    static synchronized void buildImage() throws Exception {
        require();
        writeContainersConf();
        if (imageBuilt) {
            return;
        }
        Path dist = Path.of(System.getProperty("buslane.dist.dir"));
        run(Duration.ofMinutes(10), dist.resolve("build-test-base.sh").toString(), BASE_IMAGE, BASE_TARBALL.toString());
        Path archive = ReleaseArchiveTest.archive();
        Path context = Files.createTempDirectory("buslane-image-context");
        Files.copy(archive, context.resolve(archive.getFileName()));
        run(Duration.ofMinutes(5), "podman", "build", "-q", "--format", "docker", "-f",
                dist.resolve("Containerfile").toString(), "--build-arg", "BASE_IMAGE=" + BASE_IMAGE, "-t", IMAGE,
                context.toString());
        Files.delete(context.resolve(archive.getFileName()));
        Files.delete(context);
        imageBuilt = true;
    }

    /** Starts {@code podman system service} on the socket DOCKER_HOST names (surefire sets it), once per JVM. */
    static synchronized void startService() throws Exception {
        buildImage();
        if (service != null && service.isAlive()) {
            return;
        }
        Path socket = Path.of(System.getProperty("podman.socket"));
        Files.deleteIfExists(socket);
        service = new ProcessBuilder("podman", "system", "service", "--time=0", "unix://" + socket)
                .redirectErrorStream(true)
                .redirectOutput(socket.resolveSibling("podman-service.log").toFile()).start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> service.destroy()));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.exists(socket)) {
            if (System.nanoTime() > deadline || !service.isAlive()) {
                Assertions.fail("podman system service did not open " + socket);
            }
            Thread.sleep(100);
        }
    }

    /** Runs podman (or any command) and returns its standard output; fails on a non-zero exit. */
    static String run(Duration timeout, String... command) throws Exception {
        Path out = Files.createTempFile("podman", ".out");
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                Assertions.fail(String.join(" ", command) + " did not finish in " + timeout);
            }
            String output = Files.readString(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                Assertions.fail(String.join(" ", command) + " exited with " + p.exitValue() + ":\n" + output);
            }
            return output;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** The podman command line with arguments. */
    static String[] podman(String... args) {
        List<String> all = new ArrayList<>();
        all.add("podman");
        all.addAll(List.of(args));
        return all.toArray(String[]::new);
    }

    /** The HTTP status of {@code GET /health} on this port, or -1 when nothing answers. */
    static int health(int port) {
        try (Socket probe = new Socket("127.0.0.1", port)) {
            probe.setSoTimeout(1000);
        } catch (IOException e) {
            return -1;
        }
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/health")).timeout(Duration.ofSeconds(3)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    // crun fails here (rlimits, cgroups in hybrid mode): runc and no default ulimits, as containers.md says
    private static void writeContainersConf() throws IOException {
        String conf = System.getenv("CONTAINERS_CONF");
        if (conf != null && !Files.exists(Path.of(conf))) {
            Files.createDirectories(Path.of(conf).getParent());
            Files.writeString(Path.of(conf), "[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = \"runc\"\n");
        }
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }
}
