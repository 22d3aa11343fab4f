package io.buslane.management.atom;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;

/**
 * Parses request bodies with the JDK's DOM parser (namespace-aware, no DTDs, no external entities) and finds the
 * description inside the ATOM entry: {@code entry/content/QueueDescription} and the like. Elements are matched by
 * local name so that clients that prefix or omit namespaces are still understood. A bare description (without the
 * ATOM envelope) is accepted too.
 */
final class AtomReader {

    private static final DocumentBuilderFactory FACTORY = factory();

    private AtomReader() {
    }

    /** The description element of an ATOM entry body. */
    static Element description(byte[] body) {
        if (body.length == 0) {
            throw new IllegalArgumentException("The request body is empty; expected an ATOM entry whose content is "
                    + "an entity description.");
        }
        Element root = parse(body).getDocumentElement();
        if (!root.getLocalName().equals("entry")) {
            return root;
        }
        Element content = child(root, "content");
        Element description = content == null ? null : firstChild(content);
        if (description == null) {
            throw new IllegalArgumentException("The ATOM entry has no content with an entity description.");
        }
        return description;
    }

    static Document parse(byte[] body) {
        try {
            DocumentBuilder builder;
            synchronized (FACTORY) {
                builder = FACTORY.newDocumentBuilder(); // the factory is not thread-safe; its builders are cheap
            }
            builder.setErrorHandler(null);
            return builder.parse(new ByteArrayInputStream(body));
        } catch (SAXException | IOException e) {
            String m = e.getMessage() == null ? "" : e.getMessage();
            if (m.contains("invalid XML character")) {
                throw new IllegalArgumentException("The request body contains a character XML 1.0 does not allow "
                        + "(U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+FFFE, U+FFFF or an unpaired surrogate), "
                        + "literally or as a character reference: " + m, e);
            }
            throw new IllegalArgumentException("The request body is not well-formed XML: " + m, e);
        } catch (ParserConfigurationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Namespace-aware, no DTDs, no external entities, no XInclude; configured once. */
    private static DocumentBuilderFactory factory() {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setNamespaceAware(true);
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setXIncludeAware(false);
            f.setExpandEntityReferences(false);
            f.setCoalescing(true);
            return f;
        } catch (ParserConfigurationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The first child element with this local name, or null. */
    static Element child(Element parent, String local) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && local.equals(e.getLocalName())) {
                return e;
            }
        }
        return null;
    }

    /** All child elements with this local name. */
    static List<Element> children(Element parent, String local) {
        List<Element> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && local.equals(e.getLocalName())) {
                out.add(e);
            }
        }
        return out;
    }

    static Element firstChild(Element parent) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e) {
                return e;
            }
        }
        return null;
    }

    /** Whether the element carries {@code xsi:nil="true"}. */
    static boolean isNil(Element e) {
        return "true".equalsIgnoreCase(e.getAttributeNS(Xmlns.XSI, "nil").trim());
    }

    /**
     * The local part of the element's {@code xsi:type} ({@code SqlFilter} for {@code i:type="SqlFilter"} or
     * {@code d2p1:SqlFilter}); a plain {@code type} attribute is accepted too. Null when there is none.
     */
    static String xsiType(Element e) {
        String type = e.getAttributeNS(Xmlns.XSI, "type");
        if (type.isEmpty()) {
            type = e.getAttribute("type");
        }
        if (type.isEmpty()) {
            return null;
        }
        int colon = type.indexOf(':');
        return colon >= 0 ? type.substring(colon + 1) : type;
    }
}
