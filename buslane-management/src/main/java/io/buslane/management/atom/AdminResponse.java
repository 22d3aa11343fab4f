package io.buslane.management.atom;

/**
 * A management response: status, content type and body (null for none). Immutable.
 */
record AdminResponse(int status, String contentType, String body) {

    static final String ENTRY_TYPE = "application/atom+xml;type=entry;charset=utf-8";
    static final String FEED_TYPE = "application/atom+xml;type=feed;charset=utf-8";
    static final String ERROR_TYPE = "application/xml;charset=utf-8";

    static AdminResponse entry(int status, String xml) {
        return new AdminResponse(status, ENTRY_TYPE, xml);
    }

    static AdminResponse feed(String xml) {
        return new AdminResponse(200, FEED_TYPE, xml);
    }

    /** 200 without a body (what the service answers to a delete). */
    static AdminResponse okEmpty() {
        return new AdminResponse(200, null, null);
    }
}
