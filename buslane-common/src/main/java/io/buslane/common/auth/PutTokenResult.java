package io.buslane.common.auth;

import java.util.Objects;

/**
 * The answer to a CBS {@code put-token} request (wire protocol §2.6). The link layer sends {@link #statusCode()}
 * as an AMQP <b>int</b> under both {@code status-code} and {@code statusCode}, and {@link #statusDescription()}
 * under {@code status-description} and {@code statusDescription}; on success it must not send an
 * {@code error-condition}.
 *
 * @param statusCode        202 on success; 401 (unauthorised) or 400 (bad request) on failure
 * @param statusDescription {@code Accepted} on success, else why it failed
 */
public record PutTokenResult(int statusCode, String statusDescription) {

    /** The success status (as Azure answers). */
    public static final int ACCEPTED = 202;

    private static final PutTokenResult ACCEPTED_RESULT = new PutTokenResult(ACCEPTED, "Accepted");

    public PutTokenResult {
        Objects.requireNonNull(statusDescription, "statusDescription");
    }

    /** 202 "Accepted". */
    public static PutTokenResult accepted() {
        return ACCEPTED_RESULT;
    }

    /** 401 with {@code description}. */
    public static PutTokenResult unauthorized(String description) {
        return new PutTokenResult(AuthException.UNAUTHORIZED, description);
    }

    /** 400 with {@code description}. */
    public static PutTokenResult badRequest(String description) {
        return new PutTokenResult(AuthException.BAD_REQUEST, description);
    }

    /** The failure {@code e} describes. */
    public static PutTokenResult of(AuthException e) {
        return new PutTokenResult(e.statusCode(), e.description());
    }

    /** Whether the token was accepted (a 2xx status). */
    public boolean isSuccess() {
        return statusCode >= 200 && statusCode < 300;
    }

    /** The AMQP error condition for a failed reply ({@code amqp:unauthorized-access}, ...), or null on success. */
    public String errorCondition() {
        if (isSuccess()) {
            return null;
        }
        return new AuthException(statusCode, statusDescription).kind().amqpCondition();
    }
}
