package io.buslane.management.rest;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.buslane.common.error.BrokerException;
import io.vertx.core.MultiMap;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Coverage-guided fuzzing of the runtime REST API's request parsing: a single message from its
 * {@code BrokerProperties} JSON header, user-property headers and body ({@code RestApi.single}), a batch from its
 * JSON body ({@code RestApi.batch}), and the path ({@link RestApi#parse}, the canonical address parser). The
 * first two are private to {@link RestApi} and called here by reflection, so the test exercises the code the
 * server runs.
 *
 * <p>Input: UTF-8 text: the {@code BrokerProperties} header on the first line, then {@code Name: value} headers up
 * to an empty line, then the body (a batch's JSON, or a single message's bytes); the first header line, if any, is
 * also decoded as a path. Invariant: nothing escapes but the module's documented client errors,
 * {@link IllegalArgumentException} (400) and a {@link BrokerException} of a 4xx kind.
 *
 * <p>Seeds: requests as the service's REST documentation writes them (no official SDK speaks this API), in
 * {@code RestFuzzTestInputs/request/}.
 */
class RestFuzzTest {

    private static final Method SINGLE = method("single", MultiMap.class, String.class, byte[].class);
    private static final Method BATCH = method("batch", byte[].class);

    @FuzzTest(maxDuration = "30s")
    void request(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        String[] lines = text.split("\n", -1);
        MultiMap headers = MultiMap.caseInsensitiveMultiMap();
        add(headers, "BrokerProperties", lines[0]);
        int line = 1;
        while (line < lines.length && !lines[line].isEmpty()) {
            int colon = lines[line].indexOf(':');
            if (colon > 0) {
                add(headers, lines[line].substring(0, colon), lines[line].substring(colon + 1).trim());
            }
            line++;
        }
        int bodyStart = 0;
        for (int i = 0; i <= line && i < lines.length; i++) {
            bodyStart += lines[i].getBytes(StandardCharsets.UTF_8).length + 1;
        }
        byte[] body = bodyStart >= input.length ? new byte[0] : Arrays.copyOfRange(input, bodyStart, input.length);
        if (lines.length > 1) {
            clientErrorsOnly(() -> RestApi.parse(lines[1]));
        }
        clientErrorsOnly(() -> SINGLE.invoke(null, headers, headers.get("Content-Type"), body));
        clientErrorsOnly(() -> BATCH.invoke(null, body));
    }

    private interface Call {
        Object run() throws Exception;
    }

    private static void clientErrorsOnly(Call call) {
        try {
            call.run();
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IllegalArgumentException) {
                return; // 400
            }
            if (cause instanceof BrokerException b && b.kind().httpStatus() < 500) {
                return;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new AssertionError(cause);
        } catch (IllegalArgumentException badRequest) {
            // 400
        } catch (BrokerException b) {
            if (b.kind().httpStatus() >= 500) {
                throw b;
            }
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** A header as the HTTP server would have parsed it (one it would refuse never reaches the API). */
    private static void add(MultiMap headers, String name, String value) {
        try {
            headers.add(name, value);
        } catch (IllegalArgumentException invalidHeader) {
            // the HTTP codec refuses it
        }
    }

    private static Method method(String name, Class<?>... parameters) {
        try {
            Method m = RestApi.class.getDeclaredMethod(name, parameters);
            m.setAccessible(true);
            return m;
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("RestApi." + name + " changed: update RestFuzzTest", e);
        }
    }
}
