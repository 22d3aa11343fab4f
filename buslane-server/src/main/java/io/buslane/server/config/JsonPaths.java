package io.buslane.server.config;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.regex.Pattern;

/**
 * Stateless. JSON paths in the {@code $.UserConfig.Namespaces[0].Queues[2].Name} notation used in error messages,
 * and the mapping back from such a path to a line and column of the source text.
 */
final class JsonPaths {

    /** The path of the document itself. */
    static final String ROOT = "$";

    private static final Pattern PLAIN_KEY = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");

    private JsonPaths() {
    }

    /** The path of property {@code key} of the object at {@code parent}; unusual keys use {@code ['...']}. */
    static String child(String parent, String key) {
        if (PLAIN_KEY.matcher(key).matches()) {
            return parent + "." + key;
        }
        return parent + "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']";
    }

    /** The path of element {@code index} of the array at {@code parent}. */
    static String index(String parent, int index) {
        return parent + "[" + index + "]";
    }

    /** The path of the value a parser is on (or, after a failure, was reading), from its parsing context. */
    static String of(JsonStreamContext context) {
        Deque<JsonStreamContext> chain = new ArrayDeque<>();
        for (JsonStreamContext c = context; c != null && !c.inRoot(); c = c.getParent()) {
            chain.push(c);
        }
        String path = ROOT;
        for (JsonStreamContext c : chain) {
            if (c.inArray() && c.getEntryCount() > 0) {
                path = index(path, c.getCurrentIndex());
            } else if (c.inObject() && c.getCurrentName() != null) {
                path = child(path, c.getCurrentName());
            } else {
                break;
            }
        }
        return path;
    }

    /**
     * Finds where {@code path} is in {@code json}: the location of the property name (or array element) it names, or
     * of its closest existing ancestor when the path names something absent. Returns {@code null} if the text cannot
     * be read; the caller then reports the path alone.
     */
    static JsonLocation locate(JsonFactory factory, byte[] json, String path) {
        JsonLocation best = null;
        int bestLength = -1;
        try (JsonParser parser = factory.createParser(json)) {
            JsonToken token;
            while ((token = parser.nextToken()) != null) {
                if (token.isStructEnd()) {
                    continue;
                }
                String here = of(parser.getParsingContext());
                if (here.equals(path)) {
                    return parser.currentTokenLocation();
                }
                if (here.length() > bestLength && isAncestor(here, path)) {
                    best = parser.currentTokenLocation();
                    bestLength = here.length();
                }
            }
        } catch (IOException | RuntimeException e) {
            return best;
        }
        return best;
    }

    private static boolean isAncestor(String candidate, String path) {
        if (!path.startsWith(candidate) || path.length() == candidate.length()) {
            return false;
        }
        char next = path.charAt(candidate.length());
        return next == '.' || next == '[';
    }
}
