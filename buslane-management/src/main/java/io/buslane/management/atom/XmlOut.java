package io.buslane.management.atom;

import java.io.StringWriter;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/**
 * A small fluent layer over a StAX writer that builds one UTF-8 document as a string. Elements opened with
 * {@link #open(String)} carry no prefix and inherit the default namespace in scope. Text is escaped so that it
 * reads back byte-identically: besides {@code & < >}, a carriage return is written as {@code &#xD;} (an XML parser
 * would otherwise turn a literal CR into LF). Not thread-safe; one per response.
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
        return run(() -> w.writeAttribute(local, value));
    }

    /** An attribute {@code prefix:local} (e.g. {@code i:type}); the prefix must be declared. */
    XmlOut attribute(String prefix, String namespace, String local, String value) {
        return run(() -> w.writeAttribute(prefix, namespace, local, value));
    }

    XmlOut text(String text) {
        return run(() -> {
            int from = 0;
            for (int i = 0; i < text.length(); i++) {
                if (text.charAt(i) == '\r') {
                    w.writeCharacters(text.substring(from, i));
                    w.writeEntityRef("#xD");
                    from = i + 1;
                }
            }
            w.writeCharacters(text.substring(from));
        });
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
