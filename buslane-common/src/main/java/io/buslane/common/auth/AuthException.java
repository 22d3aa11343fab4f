package io.buslane.common.auth;

import io.buslane.common.error.ErrorKind;

/**
 * An authentication or authorisation failure, with the description sent to the client and the status code of a
 * {@code put-token} reply (401 unless stated otherwise).
 */
public final class AuthException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Status for a token that is malformed, invalid, expired or insufficient. */
    public static final int UNAUTHORIZED = 401;
    /** Status for a request that is malformed (missing or unknown token type, missing audience). */
    public static final int BAD_REQUEST = 400;

    private final int statusCode;

    public AuthException(String description) {
        this(UNAUTHORIZED, description);
    }

    public AuthException(int statusCode, String description) {
        super(description, null, false, false);
        this.statusCode = statusCode;
    }

    /** The {@code put-token} status code: 401 or 400. */
    public int statusCode() {
        return statusCode;
    }

    /** The description sent to clients. */
    public String description() {
        return getMessage();
    }

    /**
     * The broker error kind for link-level failures: {@link ErrorKind#UNAUTHORIZED}
     * ({@code amqp:unauthorized-access}) or, for a 400, {@link ErrorKind#ARGUMENT}.
     */
    public ErrorKind kind() {
        return statusCode == BAD_REQUEST ? ErrorKind.ARGUMENT : ErrorKind.UNAUTHORIZED;
    }
}
