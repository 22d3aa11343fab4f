package io.buslane.management.atom;

import io.buslane.engine.filter.XmlText;

import java.io.StringWriter;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/**
 * A small fluent layer over a StAX writer that builds one UTF-8 document as a string. Elements opened with
 * {@link #open(String)} carry no prefix and inherit the default namespace in scope. Text is escaped so that it
 * reads back byte-identically: besides {@code & < >}, a carriage return is written as {@code &#xD;} (an XML parser
 * would otherwise turn a literal CR into LF). A character XML 1.0 cannot carry at all (U+0000-U+0008, U+000B,
 * U+000C, U+000E-U+001F, U+FFFE, U+FFFF, an unpaired surrogate; see {@link XmlText}) is written as U+FFFD, so
 * every document parses: the API refuses such characters in what it stores, but an error detail may quote a
 * request, and text stored by other paths reaches the feeds. Not thread-safe; one per response.
 */
final class XmlOut {

    private static final XMLOutputFactory FACTORY = XMLOutputFactory.newFactory();

    private final StringWriter sink = new StringWriter();
    private final XMLStreamWriter w;

    XmlOut() {
        try {
            w = FACTORY.createXMLStreamWriter(sink);
            w.writeStartDocument("utf-8", "1.0");
        } catch (XMLStreamException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Opens an element without prefix; it is in the default namespace in scope. */
    XmlOut open(String local) {
        return run(() -> w.writeStartElement(local));
    }

    /** Opens {@code prefix:local}; the prefix must be declared (here or by an ancestor). */
    XmlOut open(String prefix, String namespace, String local) {
        return run(() -> w.writeStartElement(prefix, local, namespace));
    }

    /** Declares the default namespace on the element just opened. */
    XmlOut defaultNamespace(String namespace) {
        return run(() -> w.writeDefaultNamespace(namespace));
    }

    /** Declares a prefix on the element just opened. */
    XmlOut namespace(String prefix, String namespace) {
        return run(() -> w.writeNamespace(prefix, namespace));
    }

    XmlOut attribute(String local, String value) {
        return run(() -> w.writeAttribute(local, clean(value)));
    }

    /** An attribute {@code prefix:local} (e.g. {@code i:type}); the prefix must be declared. */
    XmlOut attribute(String prefix, String namespace, String local, String value) {
        return run(() -> w.writeAttribute(prefix, namespace, local, clean(value)));
    }

    XmlOut text(String text) {
        String t = clean(text);
        return run(() -> {
            int from = 0;
            for (int i = 0; i < t.length(); i++) {
                if (t.charAt(i) == '\r') {
                    w.writeCharacters(t.substring(from, i));
                    w.writeEntityRef("#xD");
                    from = i + 1;
                }
            }
            w.writeCharacters(t.substring(from));
        });
    }

    /** The text with every character XML 1.0 cannot carry replaced by U+FFFD; the same string when there is none. */
    static String clean(String text) {
        int first = XmlText.firstForbidden(text);
        if (first < 0) {
            return text;
        }
        StringBuilder b = new StringBuilder(text.length()).append(text, 0, first);
        for (int i = first; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                b.append(c).append(text.charAt(++i));
            } else {
                b.append(XmlText.forbidden(c) ? '\uFFFD' : c);
            }
        }
        return b.toString();
    }

    XmlOut close() {
        return run(w::writeEndElement);
    }

    /** {@code <local>value</local>}; nothing when the value is null. */
    XmlOut leaf(String local, Object value) {
        if (value == null) {
            return this;
        }
        return open(local).text(value.toString()).close();
    }

    /** {@code <prefix:local>value</prefix:local>}. */
    XmlOut leaf(String prefix, String namespace, String local, Object value) {
        return open(prefix, namespace, local).text(value.toString()).close();
    }

    /** {@code <local/>} with nothing inside. */
    XmlOut empty(String local) {
        return run(() -> w.writeEmptyElement(local));
    }

    /** Ends the document and returns it. */
    String finish() {
        run(w::writeEndDocument);
        run(w::flush);
        return sink.toString();
    }

    private interface XmlStep {
        void run() throws XMLStreamException;
    }

    private XmlOut run(XmlStep step) {
        try {
            step.run();
            return this;
        } catch (XMLStreamException e) {
            throw new IllegalStateException("Could not write XML: " + e.getMessage(), e);
        }
    }
}
