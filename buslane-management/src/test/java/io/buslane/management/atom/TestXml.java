package io.buslane.management.atom;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import javax.xml.namespace.NamespaceContext;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;

/** A parsed response with namespace-aware XPath: prefixes a (Atom), sb (entities), c (counts), i (xsi). */
final class TestXml {

    private static final Map<String, String> PREFIXES = Map.of("a", Xmlns.ATOM, "sb", Xmlns.SB, "c", Xmlns.COUNTS,
            "i", Xmlns.XSI);

    private final Document doc;
    private final XPath xpath;

    private TestXml(Document doc) {
        this.doc = doc;
        this.xpath = XPathFactory.newInstance().newXPath();
        xpath.setNamespaceContext(new NamespaceContext() {
            @Override
            public String getNamespaceURI(String prefix) {
                return PREFIXES.get(prefix);
            }

            @Override
            public String getPrefix(String uri) {
                return null;
            }

            @Override
            public Iterator<String> getPrefixes(String uri) {
                return null;
            }
        });
    }

    static TestXml parse(String body) {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setNamespaceAware(true);
            return new TestXml(f.newDocumentBuilder().parse(new ByteArrayInputStream(
                    body.getBytes(StandardCharsets.UTF_8))));
        } catch (Exception e) {
            throw new AssertionError("not XML: " + body, e);
        }
    }

    /** The text of the first node the expression selects, or null when it selects nothing. */
    String text(String expression) {
        Node n = node(expression);
        return n == null ? null : n.getTextContent();
    }

    Node node(String expression) {
        try {
            return (Node) xpath.evaluate(expression, doc, XPathConstants.NODE);
        } catch (Exception e) {
            throw new AssertionError(expression, e);
        }
    }

    int count(String expression) {
        try {
            return ((NodeList) xpath.evaluate(expression, doc, XPathConstants.NODESET)).getLength();
        } catch (Exception e) {
            throw new AssertionError(expression, e);
        }
    }

    List<String> texts(String expression) {
        try {
            NodeList list = (NodeList) xpath.evaluate(expression, doc, XPathConstants.NODESET);
            List<String> out = new ArrayList<>();
            for (int i = 0; i < list.getLength(); i++) {
                out.add(list.item(i).getTextContent());
            }
            return out;
        } catch (Exception e) {
            throw new AssertionError(expression, e);
        }
    }

    /** The local names of the child elements of the selected element, in document order. */
    List<String> childNames(String expression) {
        Element parent = (Element) node(expression);
        List<String> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e) {
                out.add(e.getLocalName());
            }
        }
        return out;
    }

    Element root() {
        return doc.getDocumentElement();
    }
}
