package io.buslane.management.rest;

import io.buslane.common.error.BrokerException;
import io.buslane.engine.receive.DeliverySink;
import io.buslane.engine.api.EntityAddress;
import io.buslane.engine.api.ReceiveMode;
import io.buslane.engine.receive.Receiver;
import io.buslane.engine.message.ReceivedMessage;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;

/**
 * One REST receive: a receiver with one unit of credit that waits up to the timeout for a message, then drains
 * (taking back the credit) and closes. Everything but the engine callbacks runs on the request's context; the
 * engine's callbacks (shard threads) hop onto it. The drain completes only after any delivery it made reached
 * the sink, and both hop onto the same context in that order, so a message is never lost between "no message"
 * and the answer. If the client goes away first, a message locked for it is released (without counting a
 * delivery).
 */
final class RestReceive implements DeliverySink {

    private final RestApi api;
    private final RoutingContext ctx;
    private final EntityAddress address;
    private final ReceiveMode mode;
    private final String rawEntity;
    private final Context context;
    private final Vertx vertx;
    private Receiver receiver;
    private boolean done;
    private long timer = -1;

    RestReceive(RestApi api, RoutingContext ctx, EntityAddress address, ReceiveMode mode, String rawEntity) {
        this.api = api;
        this.ctx = ctx;
        this.address = address;
        this.mode = mode;
        this.rawEntity = rawEntity;
        this.context = Vertx.currentContext();
        this.vertx = ctx.vertx();
    }

    void start(long timeoutMs) {
        try {
            receiver = api.engine().createReceiver(address, mode, this);
        } catch (RuntimeException e) {
            done = true;
            RestErrors.write(ctx, e, api.clock().epochMillis());
            return;
        }
        ctx.response().closeHandler(v -> abandonRequest());
        receiver.addCredit(1);
        if (timeoutMs == 0) {
            finishEmpty();
        } else {
            timer = api.timeouts().schedule(vertx, timeoutMs, this::finishEmpty);
        }
    }

    /** The timeout: take the credit back; answer 204 unless the drain delivered a message. */
    private void finishEmpty() {
        timer = -1;
        if (done) {
            return;
        }
        receiver.drain().whenComplete((credit, failure) -> context.runOnContext(v -> {
            if (done) {
                return;
            }
            done = true;
            receiver.close();
            if (ctx.response().ended() || ctx.response().closed()) {
                return;
            }
            ctx.response().setStatusCode(204).end();
        }));
    }

    private void delivered(ReceivedMessage message) {
        if (done) {
            // the client went away (or the receive already ended): do not strand a lock on nobody
            if (mode == ReceiveMode.PEEK_LOCK && message.lockToken() != null) {
                api.engine().release(address, message.lockToken());
            }
            return;
        }
        done = true;
        cancelTimer();
        receiver.close();
        if (ctx.response().closed()) {
            if (mode == ReceiveMode.PEEK_LOCK && message.lockToken() != null) {
                api.engine().release(address, message.lockToken());
            }
            return;
        }
        RestApi.writeMessage(ctx, message, mode, rawEntity);
    }

    private void abandonRequest() {
        if (done) {
            return;
        }
        done = true;
        cancelTimer();
        // a message in flight is released by delivered(); the drain returns the credit
        receiver.drain().whenComplete((credit, failure) -> receiver.close());
    }

    private void cancelTimer() {
        if (timer != -1) {
            api.timeouts().cancel(vertx, timer);
            timer = -1;
        }
    }

    @Override
    public void onMessage(Receiver from, ReceivedMessage message) {
        context.runOnContext(v -> delivered(message));
    }

    @Override
    public void onClosed(Receiver from, BrokerException error) {
        context.runOnContext(v -> {
            if (done) {
                return;
            }
            done = true;
            cancelTimer();
            RestErrors.write(ctx, error, api.clock().epochMillis());
        });
    }
}
