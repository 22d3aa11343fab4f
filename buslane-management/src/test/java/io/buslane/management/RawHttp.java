package io.buslane.management;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Test helper: HTTP/1.1 over a plain socket, for what {@code java.net.http} cannot do: send a request's headers
 * and only part of its body, and see whether (and when) the server answers and closes the connection.
 */
public final class RawHttp implements AutoCloseable {

    /** One response: status, headers (names lower case) and body. */
    public record Response(int status, Map<String, String> headers, String body) {
        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private final Socket socket;
    private final InputStream in;

    public RawHttp(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        in = socket.getInputStream();
    }

    /** Writes text (headers) as ASCII. */
    public RawHttp write(String text) throws IOException {
        return write(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    public RawHttp write(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
        return this;
    }

    /** Writes one chunk of a chunked body. */
    public RawHttp chunk(byte[] bytes) throws IOException {
        write(Integer.toHexString(bytes.length) + "\r\n");
        write(bytes);
        return write("\r\n");
    }

    /**
     * Reads the next response (within 10 s); a body only when it has a {@code Content-Length}.
     *
     * @throws AssertionError when no response arrives in time
     */
    public Response read() throws IOException {
        String statusLine;
        try {
            statusLine = line();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no response within 10 s", e);
        }
        if (statusLine == null) {
            throw new AssertionError("the connection closed without a response");
        }
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new TreeMap<>();
        for (String line = line(); line != null && !line.isEmpty(); line = line()) {
            int colon = line.indexOf(':');
            headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
        }
        String length = headers.get("content-length");
        byte[] body = length == null ? new byte[0] : in.readNBytes(Integer.parseInt(length));
        return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    /**
     * Keeps sending up to {@code maxBytes} of body and reports whether the server closed the connection (a write or
     * read fails, or the read ends) instead of reading it all.
     */
    public boolean closedByServerWithin(long maxBytes) {
        byte[] chunk = new byte[64 * 1024];
        try {
            for (long sent = 0; sent < maxBytes; sent += chunk.length) {
                socket.getOutputStream().write(chunk);
            }
            socket.getOutputStream().flush();
            return in.read() == -1;
        } catch (IOException e) {
            return true; // reset or broken pipe: closed
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                String s = b.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
