package io.buslane.management.atom;

/** The XML namespaces of the management API. */
final class Xmlns {

    static final String ATOM = "http://www.w3.org/2005/Atom";
    /** Entity descriptions ({@code QueueDescription}, {@code RuleDescription}, ...). */
    static final String SB = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect";
    /** The children of {@code CountDetails}. */
    static final String COUNTS = "http://schemas.microsoft.com/netservices/2011/06/servicebus";
    static final String XSI = "http://www.w3.org/2001/XMLSchema-instance";
    static final String XSD = "http://www.w3.org/2001/XMLSchema";
    /** .NET's data-contract types ({@code guid}, {@code duration}, {@code char}). */
    static final String SERIALIZATION = "http://schemas.microsoft.com/2003/10/Serialization/";

    private Xmlns() {
    }
}
