package io.buslane.management.atom;

import io.buslane.common.auth.AuthException;
import io.buslane.common.auth.AuthThrottledException;
import io.buslane.common.error.BrokerException;
import io.buslane.common.error.ErrorKind;
import io.buslane.engine.entity.EntityNames;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.UUID;

/**
 * Failures as the service reports them: {@code <Error><Code>404</Code><Detail>...</Detail></Error>}, the status
 * from the broker's one error table (a missing entity is always 404, never a 5xx that SDK retry policies would
 * hammer), 400 for invalid descriptions, 401 for authorisation failures, 429 for an address throttled after too
 * many of them.
 */
final class AdminErrors {

    private static final Logger LOG = LoggerFactory.getLogger(AdminErrors.class);

    private AdminErrors() {
    }

    static AdminResponse of(Throwable t, AdminRequest request, long nowMs) {
        if (t instanceof AuthException e) {
            return error(e.statusCode(), e.description(), request, nowMs);
        }
        if (t instanceof AuthThrottledException e) {
            return error(AuthThrottledException.STATUS, e.description(), request, nowMs);
        }
        if (t instanceof BrokerException e) {
            if (e.kind() == ErrorKind.INTERNAL) {
                LOG.warn("Management request {} {} failed", request.method(), request.rawPath(), e);
            }
            return error(e.kind().httpStatus(), e.description(), request, nowMs);
        }
        if (t instanceof IllegalArgumentException e) {
            return error(400, e.getMessage(), request, nowMs);
        }
        LOG.error("Management request {} {} failed", request.method(), request.rawPath(), t);
        return error(500, "The request could not be processed: " + t, request, nowMs);
    }

    /** An error response; the detail gets the service's tracking suffix. */
    static AdminResponse error(int status, String detail, AdminRequest request, long nowMs) {
        String tracker = request == null ? ""
                : EntityNames.printable(request.namespaceName() + ":" + request.path().audiencePath());
        String full = detail + " TrackingId:" + UUID.randomUUID() + ", SystemTracker:" + tracker + ", Timestamp:"
                + XmlTimes.format(nowMs);
        XmlOut out = new XmlOut();
        out.open("Error").leaf("Code", status).leaf("Detail", full).close();
        return new AdminResponse(status, AdminResponse.ERROR_TYPE, out.finish());
    }
}
