package io.buslane.bench.broker;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Workload 10's set-up of idle sessions, run as its own JVM on the broker's classpath ({@code buslane.jar} and the
 * bench classes; the bench JVM itself does not carry the broker's libraries): starts a broker in process on a data
 * directory, writes {@code count} session states of {@code stateBytes} each (sessions {@code <prefix><n>}, no
 * messages) through the engine, times listing pages of them, and stops the broker, leaving the directory for the
 * packaged broker to restart on. Reflection only, so that the bench module needs no compile-time dependency on the
 * broker. Prints {@code SETUP key=value} lines.
 *
 * <p>Arguments: {@code <dataDir> <config.json> <queue> <prefix> <count> <stateBytes> <shards>}.
 */
public final class IdleSessionsSetup {

    private IdleSessionsSetup() {
    }

    public static void main(String[] args) throws Exception {
        Path dataDir = Path.of(args[0]);
        Path config = Path.of(args[1]);
        String queue = args[2];
        String prefix = args[3];
        int count = Integer.parseInt(args[4]);
        int stateBytes = Integer.parseInt(args[5]);
        int shards = Integer.parseInt(args[6]);

        Class<?> optionsClass = Class.forName("io.buslane.server.BrokerOptions");
        int maxConnections = (int) optionsClass.getMethod("defaultMaxConnections").invoke(null);
        Object options = optionsClass.getConstructor(String.class, int.class, int.class, Path.class, Path.class,
                int.class, boolean.class, boolean.class, List.class, boolean.class, int.class)
                .newInstance("127.0.0.1", 0, 0, dataDir, config, shards, true, false, null, false, maxConnections);
        Class<?> brokerClass = Class.forName("io.buslane.server.Broker");
        AutoCloseable broker = (AutoCloseable) brokerClass.getMethod("start", optionsClass).invoke(null, options);
        try {
            Object engine = brokerClass.getMethod("engine").invoke(broker);
            Class<?> addressClass = Class.forName("io.buslane.engine.api.EntityAddress");
            Object address = addressClass.getMethod("queueOrTopic", String.class).invoke(null, queue);
            Method set = engine.getClass().getMethod("setSessionState", addressClass, String.class, byte[].class);
            long t0 = System.nanoTime();
            ArrayDeque<CompletableFuture<?>> pending = new ArrayDeque<>();
            for (int i = 0; i < count; i++) {
                byte[] state = new byte[stateBytes];
                java.util.concurrent.ThreadLocalRandom.current().nextBytes(state);
                pending.add((CompletableFuture<?>) set.invoke(engine, address, prefix + i, state));
                if (pending.size() >= 10_000) {
                    pending.poll().get(60, TimeUnit.SECONDS);
                }
            }
            while (!pending.isEmpty()) {
                pending.poll().get(60, TimeUnit.SECONDS);
            }
            print("states_written_per_s", count / ((System.nanoTime() - t0) / 1e9));

            Method list = engine.getClass().getMethod("listSessions", addressClass, long.class, int.class, int.class,
                    String.class);
            long all = engine.getClass().getField("ALL_ACTIVE_SESSIONS").getLong(null);
            // the session browser's pages of 100: the first; one after a session id near the end (paging by the
            // last id seen); the next pages by skip near the end, each after the one before (as the SDKs page
            // with skip/top); and one page by skip near the end out of order (no page before it)
            print("list_first_page_ms", timeList(list, engine, address, all, 0, null, 100));
            print("list_page_after_id_ms", timeList(list, engine, address, all, 0, prefix + (count * 9L / 10), 100));
            print("list_next_page_by_skip_ms", timeNextPages(list, engine, address, all, Math.max(0, count - 1000)));
            print("list_page_by_skip_out_of_order_ms", timeList(list, engine, address, all, Math.max(0, count - 200),
                    null, 100));
        } finally {
            broker.close();
        }
        System.exit(0);
    }

    /** The median time of 5 listings of one page, after one unmeasured. */
    private static double timeList(Method list, Object engine, Object address, long since, int skip, String after,
                                   int top) throws Exception {
        return medianListMs(list, engine, address, since, i -> skip, after, top);
    }

    /** The median time of 5 pages of 100 by skip, each the one after the previous (one unmeasured before). */
    private static double timeNextPages(Method list, Object engine, Object address, long since, int firstSkip)
            throws Exception {
        return medianListMs(list, engine, address, since, i -> firstSkip + (i + 1) * 100, null, 100);
    }

    /** Lists 6 pages (the i-th, from -1, at {@code skipOf(i)}), each of {@code top}; the median of the last 5. */
    private static double medianListMs(Method list, Object engine, Object address, long since,
                                       java.util.function.IntUnaryOperator skipOf, String after, int top)
            throws Exception {
        double[] ms = new double[5];
        for (int i = -1; i < ms.length; i++) {
            long t = System.nanoTime();
            List<?> page = (List<?>) ((CompletableFuture<?>) list.invoke(engine, address, since,
                    skipOf.applyAsInt(i), top, after)).get(60, TimeUnit.SECONDS);
            if (page.size() != top) {
                throw new IllegalStateException("a page of " + top + " listed " + page.size() + " sessions");
            }
            if (i >= 0) {
                ms[i] = (System.nanoTime() - t) / 1e6;
            }
        }
        java.util.Arrays.sort(ms);
        return ms[ms.length / 2];
    }

    private static void print(String key, double value) {
        System.out.printf(Locale.ROOT, "SETUP %s=%.3f%n", key, value);
    }
}
