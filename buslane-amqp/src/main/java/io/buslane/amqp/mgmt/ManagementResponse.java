package io.buslane.amqp.mgmt;

import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import org.apache.qpid.proton.amqp.Symbol;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The outcome of one {@code $management} request, protocol-ready: the link layer puts {@link #applicationProperties()}
 * on the response message and, when {@link #body()} is not null, the body as an {@code amqp-value} map (see
 * {@code amqp-wire-protocol.md} §6.1).
 *
 * @param statusCode        the HTTP-like status: 200, 204, or an error status from {@link ErrorKind#httpStatus()}
 * @param statusDescription a human-readable description ("OK", "No Content", or the error's description)
 * @param errorCondition    the AMQP error condition on failure (e.g. {@code com.microsoft:message-lock-lost}); null
 *                          on success
 * @param body              the response body: String keys and proton-j typed values (arrays stay Java arrays so
 *                          they encode as AMQP arrays); null for no body
 */
public record ManagementResponse(int statusCode, String statusDescription, String errorCondition,
                                 Map<String, Object> body) {

    public static final int OK = 200;
    public static final int NO_CONTENT = 204;

    /** Application-property keys of the response (§6.1). */
    public static final String STATUS_CODE = "statusCode";
    public static final String STATUS_DESCRIPTION = "statusDescription";
    public static final String ERROR_CONDITION = "errorCondition";
    /** The hyphenated key Python's management link reads. */
    public static final String ERROR_CONDITION_HYPHENATED = "error-condition";

    public ManagementResponse {
        Objects.requireNonNull(statusDescription, "statusDescription");
        body = body == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(body));
    }

    /** 200 with no body. */
    public static ManagementResponse ok() {
        return new ManagementResponse(OK, "OK", null, null);
    }

    /** 200 with a body (String keys, proton-typed values). */
    public static ManagementResponse ok(Map<String, Object> body) {
        return new ManagementResponse(OK, "OK", null, body);
    }

    /** 200 with a one-entry body. */
    public static ManagementResponse ok(String key, Object value) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put(key, value);
        return ok(body);
    }

    /** 204: nothing to return (list-type operations); no body. */
    public static ManagementResponse noContent() {
        return new ManagementResponse(NO_CONTENT, "No Content", null, null);
    }

    /** The error response for a broker failure: its kind's status and condition, its description. */
    public static ManagementResponse error(BrokerException e) {
        String description = e.description() == null ? e.kind().name() : e.description();
        return error(e.kind(), description);
    }

    public static ManagementResponse error(ErrorKind kind, String description) {
        return new ManagementResponse(kind.httpStatus(), description == null ? kind.name() : description,
                kind.amqpCondition(), null);
    }

    /** 400 {@code com.microsoft:argument-error}. */
    public static ManagementResponse argumentError(String description) {
        return error(ErrorKind.ARGUMENT, description);
    }

    public boolean isSuccess() {
        return errorCondition == null;
    }

    /**
     * The response's application properties with the TYPE-STRICT wire types of §6.1: {@code statusCode} as an
     * {@link Integer}, {@code statusDescription} as a String and, on failure, the condition as a proton
     * {@link Symbol} under both {@code errorCondition} and {@code error-condition}.
     */
    public Map<String, Object> applicationProperties() {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put(STATUS_CODE, Integer.valueOf(statusCode));
        props.put(STATUS_DESCRIPTION, statusDescription);
        if (errorCondition != null) {
            Symbol condition = Symbol.valueOf(errorCondition);
            props.put(ERROR_CONDITION, condition);
            props.put(ERROR_CONDITION_HYPHENATED, condition);
        }
        return props;
    }
}
