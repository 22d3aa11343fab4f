package io.buslane.management.atom;

import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * ATOM envelopes: an {@code entry} around one description, and a {@code feed} of entries with a {@code next} link
 * when there are more pages. The SDKs take an entity's name from the entry's {@code title} and page with the
 * {@code $skip} of the {@code next} link.
 */
final class AtomWriter {

    /**
     * One entry.
     *
     * @param path        the entity's path relative to the namespace (for the id and self link)
     * @param title       the entity's name (a subscription's or rule's own name)
     * @param publishedMs creation time
     * @param updatedMs   last update time
     * @param content     writes the description inside {@code content}
     */
    record Entry(String path, String title, long publishedMs, long updatedMs, Consumer<XmlOut> content) {
    }

    private AtomWriter() {
    }

    static String entry(AdminRequest request, Entry entry) {
        XmlOut out = new XmlOut();
        writeEntry(out, request, entry, true);
        return out.finish();
    }

    /**
     * A feed.
     *
     * @param title    the feed's title ({@code Queues}, {@code Subscriptions}, ...)
     * @param nextSkip the {@code $skip} of the next page, or -1 when this is the last one
     * @param top      the page size, echoed in the next link
     * @param nowMs    the feed's update time
     */
    static String feed(AdminRequest request, String title, List<Entry> entries, int nextSkip, int top,
                       long nowMs) {
        String self = request.baseUri() + request.rawPath() + query(request, -1, 0);
        XmlOut out = new XmlOut();
        out.open("feed").defaultNamespace(Xmlns.ATOM);
        out.open("title").attribute("type", "text").text(title).close();
        out.leaf("id", self);
        out.leaf("updated", XmlTimes.format(nowMs));
        out.empty("link");
        out.attribute("rel", "self").attribute("href", self);
        if (nextSkip >= 0) {
            out.empty("link");
            out.attribute("rel", "next").attribute("href",
                    request.baseUri() + request.rawPath() + query(request, nextSkip, top));
        }
        for (Entry e : entries) {
            writeEntry(out, request, e, false);
        }
        out.close();
        return out.finish();
    }

    /** The title of an entities discovery feed. */
    static final String DISCOVERY_TITLE = "Publicly Listed Services";

    /**
     * What the service answers to a {@code GET} of an entity, subscription or rule that does not exist: 200 with
     * the empty discovery feed of an unoccupied name (the SDKs turn an answer without an {@code entry} into their
     * not-found error: {@code ResourceNotFoundException} in Java, {@code MessagingEntityNotFound} in .NET).
     */
    static String emptyFeed(long nowMs) {
        XmlOut out = new XmlOut();
        out.open("feed").defaultNamespace(Xmlns.ATOM);
        out.open("title").attribute("type", "text").text(DISCOVERY_TITLE).close();
        out.open("subtitle").attribute("type", "text")
                .text("This is the list of publicly-listed services currently available.").close();
        out.leaf("id", "uuid:" + UUID.randomUUID() + ";id=1");
        out.leaf("updated", XmlTimes.format(nowMs));
        out.leaf("generator", "Service Bus 1.1");
        out.close();
        return out.finish();
    }

    private static String query(AdminRequest request, int skip, int top) {
        StringBuilder q = new StringBuilder();
        if (skip >= 0) {
            q.append("$skip=").append(skip).append("&$top=").append(top);
        }
        String v = request.apiVersion();
        if (v != null) {
            q.append(q.length() == 0 ? "" : "&").append("api-version=").append(v);
        }
        return q.length() == 0 ? "" : "?" + q;
    }

    private static void writeEntry(XmlOut out, AdminRequest request, Entry e, boolean root) {
        String id = request.link(e.path());
        out.open("entry");
        if (root) {
            out.defaultNamespace(Xmlns.ATOM);
        }
        out.leaf("id", id);
        out.open("title").attribute("type", "text").text(e.title()).close();
        out.leaf("published", XmlTimes.format(e.publishedMs()));
        out.leaf("updated", XmlTimes.format(e.updatedMs()));
        out.open("author").leaf("name", request.namespaceName()).close();
        out.empty("link");
        out.attribute("rel", "self").attribute("href", id);
        out.open("content").attribute("type", "application/xml");
        e.content().accept(out);
        out.close();
        out.close();
    }
}
