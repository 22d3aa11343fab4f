package io.buslane.amqp.link;

import io.buslane.common.auth.PutTokenResult;
import io.buslane.common.auth.SasToken;
import io.buslane.common.auth.Right;
import io.buslane.amqp.mgmt.ManagementResponse;
import org.apache.qpid.proton.amqp.transaction.TransactionalState;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.txn.TransactionScope;
import org.apache.qpid.proton.Proton;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.engine.Delivery;
import org.apache.qpid.proton.engine.Receiver;
import org.apache.qpid.proton.message.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The client-to-broker link of a request/response pair: {@code $cbs} put-token requests, or {@code $management}
 * operations on an entity. Each response goes back on the reply link the request names (see
 * {@link LinkContext#findReplyLink}) with the request's message-id as correlation-id, of the same AMQP type.
 * Confined to the connection's event loop.
 */
public final class RequestLink implements LinkHandler {

    private static final Logger LOG = LoggerFactory.getLogger(RequestLink.class);
    private static final int CREDIT = 100;
    private static final Set<String> SEND_OPERATIONS = Set.of("com.microsoft:schedule-message",
            "com.microsoft:cancel-scheduled-message");

    /** Which node the link talks to. */
    public enum Kind { CBS, MANAGEMENT }

    private final LinkContext connection;
    private final Receiver receiver;
    private final Kind kind;
    private final EntityAddress entity;
    private final String nodeAddress;

    public RequestLink(LinkContext connection, Receiver receiver, Kind kind, EntityAddress entity,
                       String nodeAddress) {
        this.connection = connection;
        this.receiver = receiver;
        this.kind = kind;
        this.entity = entity;
        this.nodeAddress = nodeAddress;
    }

    public void open() {
        RequestReceivers.open(receiver, receiver.getRemoteReceiverSettleMode(), this, CREDIT);
    }

    @Override
    public void onAborted() {
        RequestReceivers.replenish(receiver, CREDIT);
    }

    @Override
    public boolean authorized() {
        if (kind == Kind.CBS) {
            return true;
        }
        String target = entity == null ? "" : entity.toString();
        return connection.allowed(target, Right.LISTEN) || connection.allowed(target, Right.SEND)
                || connection.allowed(target, Right.MANAGE);
    }

    @Override
    public void onDelivery(Delivery d) {
        if (!d.isReadable() || d.isPartial()) {
            return;
        }
        byte[] bytes = RequestReceivers.read(receiver, d);
        // a $management request under a transaction carries transactional-state on its transfer (§8)
        TransactionalState txn = d.getRemoteState() instanceof TransactionalState ts ? ts : null;
        if (!d.remotelySettled()) {
            if (txn != null) {
                TransactionalState answer = new TransactionalState();
                answer.setTxnId(txn.getTxnId());
                answer.setOutcome(Accepted.getInstance());
                d.disposition(answer);
            } else {
                d.disposition(Accepted.getInstance());
            }
        }
        d.settle();
        RequestReceivers.replenish(receiver, CREDIT);
        Message request = Proton.message();
        try {
            request.decode(bytes, 0, bytes.length);
        } catch (RuntimeException | StackOverflowError e) {
            LOG.debug("connection {}: undecodable request on {}: {}", connection.id(), nodeAddress, e.toString());
            return;
        }
        Map<String, Object> appProps = stringKeys(request.getApplicationProperties() == null ? null
                : request.getApplicationProperties().getValue());
        Object body = request.getBody() instanceof AmqpValue v ? v.getValue() : null;
        Object messageId = request.getMessageId();
        String replyTo = request.getReplyTo();
        if (kind == Kind.CBS) {
            handlePutToken(appProps, body, messageId, replyTo);
        } else {
            TransactionScope scope = txn == null ? null : connection.transactions().scope(
                    CoordinatorLink.txnId(txn.getTxnId()),
                    connection.transactions().sessionVia(receiver.getSession()), connection::runOnLoop);
            handleManagement(appProps, body, messageId, replyTo, scope);
        }
    }

    private void handlePutToken(Map<String, Object> appProps, Object body, Object messageId, String replyTo) {
        String operation = string(appProps.get("operation"));
        PutTokenResult result;
        if (!"put-token".equals(operation)) {
            result = new PutTokenResult(400, "Unsupported operation '" + operation + "' on $cbs; expected "
                    + "put-token.");
        } else {
            String token = body instanceof String s ? s : null;
            result = connection.authorizer().putToken(connection.grants(), string(appProps.get("type")),
                    string(appProps.get("name")), token, connection.nowMs());
            if (result.statusCode() == 401) {
                // a valid token is never refused; a wrong one counts against (address, key name)
                String keyName = SasToken.keyNameOf(token);
                if (connection.authThrottled(keyName)) {
                    result = new PutTokenResult(401, "Too many failed authentication attempts from this address "
                            + "for the key '" + keyName + "'; try again later.");
                } else {
                    connection.authFailed(keyName);
                }
            }
            connection.grantsChanged();
        }
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("status-code", result.statusCode());
        props.put("status-description", result.statusDescription());
        props.put("statusCode", result.statusCode());
        props.put("statusDescription", result.statusDescription());
        reply(messageId, replyTo, props, null);
    }

    private void handleManagement(Map<String, Object> appProps, Object body, Object messageId, String replyTo,
                                  TransactionScope txn) {
        String operation = string(appProps.get("operation"));
        Right right = operation != null && SEND_OPERATIONS.contains(operation) ? Right.SEND : Right.LISTEN;
        String target = entity == null ? "" : entity.toString();
        if (!connection.allowed(target, right) && !connection.allowed(target, Right.MANAGE)) {
            var error = Links.unauthorized(target, right);
            reply(messageId, replyTo, errorProps(401, error.description(), error.kind().amqpCondition()), null);
            return;
        }
        connection.management().process(entity, appProps, body, txn, connection::receiverOfLink)
                .whenComplete((response, failure) ->
                connection.runOnLoop(() -> {
                    ManagementResponse r = response != null ? response : new ManagementResponse(500,
                            "Internal error: " + failure, "amqp:internal-error", null);
                    Map<String, Object> props = r.errorCondition() == null
                            ? successProps(r.statusCode(), r.statusDescription())
                            : errorProps(r.statusCode(), r.statusDescription(), r.errorCondition());
                    reply(messageId, replyTo, props, r.body());
                }));
    }

    private static Map<String, Object> successProps(int status, String description) {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("statusCode", status);
        props.put("statusDescription", description);
        return props;
    }

    private static Map<String, Object> errorProps(int status, String description, String condition) {
        Map<String, Object> props = successProps(status, description);
        props.put("errorCondition", Symbol.valueOf(condition));
        props.put("error-condition", Symbol.valueOf(condition));
        return props;
    }

    private void reply(Object correlationId, String replyTo, Map<String, Object> appProps, Map<String, Object> body) {
        ReplyLink link = connection.findReplyLink(replyTo, receiver.getSession(), nodeAddress);
        if (link == null) {
            LOG.debug("connection {}: no reply link for reply-to '{}' on {}", connection.id(), replyTo, nodeAddress);
            return;
        }
        Message response = Proton.message();
        Properties properties = new Properties();
        properties.setCorrelationId(correlationId);
        if (replyTo != null) {
            properties.setTo(replyTo);
        }
        response.setProperties(properties);
        response.setApplicationProperties(new ApplicationProperties(appProps));
        if (body != null) {
            response.setBody(new AmqpValue(body));
        }
        link.send(response);
    }

    private static Map<String, Object> stringKeys(Map<?, ?> map) {
        Map<String, Object> out = new HashMap<>();
        if (map != null) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.put(String.valueOf(e.getKey()), e.getValue());
            }
        }
        return out;
    }

    private static String string(Object o) {
        return o == null ? null : o.toString();
    }

    /** A rejected outcome for a request that cannot be processed at all. */
    static Rejected rejected(String condition, String description) {
        Rejected r = new Rejected();
        r.setError(new ErrorCondition(Symbol.valueOf(condition), description));
        return r;
    }
}
