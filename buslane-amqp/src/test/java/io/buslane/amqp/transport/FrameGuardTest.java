package io.buslane.amqp.transport;

import io.buslane.testsupport.amqp.AmqpFrames;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What {@link FrameGuard} lets through to proton-j, and what it refuses before proton-j sees it. */
class FrameGuardTest {

    private static final int MAX_FRAME = 65_536;

    private final AmqpFrames frames = new AmqpFrames();
    private final ByteArrayOutputStream passed = new ByteArrayOutputStream();
    private boolean authenticated;

    private FrameGuard guard(AmqpLimits limits) {
        return new FrameGuard(limits, MAX_FRAME, () -> authenticated);
    }

    private FrameGuard guard() {
        return guard(AmqpLimits.defaults());
    }

    private void feed(FrameGuard guard, byte[] bytes) throws FrameGuard.Violation {
        guard.feed(bytes, 0, bytes.length, (b, off, len) -> passed.write(b, off, len));
    }

    private byte[] conversation() {
        return AmqpFrames.concat(AmqpFrames.SASL_HEADER, AmqpFrames.AMQP_HEADER, frames.frame(0, AmqpFrames.open()),
                frames.frame(0, AmqpFrames.begin()), frames.frame(0, AmqpFrames.attachSender(0, "queue.1")),
                frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), new byte[3000]),
                frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, false), new byte[500]),
                new byte[] {0, 0, 0, 8, 2, 0, 0, 0}, frames.frame(0, AmqpFrames.detach(0)));
    }

    @Test
    void passesAConversationUnchangedWholeAndOneByteAtATime() throws Exception {
        authenticated = true;
        byte[] input = conversation();
        feed(guard(), input);
        assertThat(passed.toByteArray()).isEqualTo(input);

        passed.reset();
        FrameGuard oneByOne = guard();
        for (byte b : input) {
            feed(oneByOne, new byte[] {b});
        }
        assertThat(passed.toByteArray()).isEqualTo(input);
        assertThat(oneByOne.bufferedBytes()).isZero();
        assertThat(oneByOne.linkCount()).isZero();
    }

    @Test
    void passesAConversationSplitAtEveryPoint() throws Exception {
        authenticated = true;
        byte[] input = conversation();
        for (int split = 1; split < input.length; split += 7) {
            passed.reset();
            FrameGuard g = guard();
            feed(g, Arrays.copyOfRange(input, 0, split));
            feed(g, Arrays.copyOfRange(input, split, input.length));
            assertThat(passed.toByteArray()).as("split at %d", split).isEqualTo(input);
        }
    }

    @Test
    void refusesADispositionOverAnEndlessRange() {
        byte[] frame = frames.frame(0, AmqpFrames.endlessDisposition());
        assertThatThrownBy(() -> feed(guard(), frame))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> {
                    assertThat(v.condition()).isEqualTo("amqp:invalid-field");
                    assertThat(v.getMessage()).contains("at most 65536 deliveries", "4294967296");
                });
        assertThat(passed.size()).as("nothing of it reaches proton-j").isZero();
    }

    @Test
    void refusesAHandleBeyondTheHandleMax() {
        byte[] frame = frames.frame(0, AmqpFrames.attachSender(0xffffffffL, "queue.1"));
        assertThatThrownBy(() -> feed(guard(), frame))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> assertThat(v.getMessage())
                        .contains("handle 4294967295", "handle-max of 1023"));
    }

    @Test
    void refusesValuesNestedTooDeeply() {
        assertThatThrownBy(() -> feed(guard(), AmqpFrames.deeplyNestedOpen(5_000)))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> {
                    assertThat(v.condition()).isEqualTo("amqp:decode-error");
                    assertThat(v.getMessage()).contains("nest deeper than 32");
                });
    }

    @Test
    void acceptsValuesNestedWithinTheLimit() throws Exception {
        feed(guard(), AmqpFrames.deeplyNestedOpen(10));
        assertThat(passed.size()).isPositive();
    }

    @Test
    void refusesAChannelBeyondTheChannelMax() {
        byte[] frame = frames.frame(1024, AmqpFrames.begin());
        assertThatThrownBy(() -> feed(guard(), frame))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> {
                    assertThat(v.condition()).isEqualTo("amqp:connection:framing-error");
                    assertThat(v.getMessage()).contains("Channel 1024", "1024 sessions");
                });
    }

    @Test
    void countsLinksOverTheConnectionAndFreesThemOnDetachAndEnd() throws Exception {
        AmqpLimits d = AmqpLimits.defaults();
        FrameGuard g = guard(new AmqpLimits(d.handshakeTimeoutMs(), d.authTimeoutMs(), 4, 8, 3,
                d.maxBufferedBytes(), d.maxPreAuthBufferedBytes(), d.maxDispositionRange(), d.maxNestingDepth()));
        feed(g, frames.frame(0, AmqpFrames.attachSender(0, "a")));
        feed(g, frames.frame(0, AmqpFrames.attachSender(1, "b")));
        feed(g, frames.frame(1, AmqpFrames.attachSender(0, "c")));
        assertThatThrownBy(() -> feed(g, frames.frame(1, AmqpFrames.attachSender(1, "d"))))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> {
                    assertThat(v.condition()).isEqualTo("amqp:resource-limit-exceeded");
                    assertThat(v.getMessage()).contains("at most 3 links");
                });
        feed(g, frames.frame(0, AmqpFrames.detach(1)));
        feed(g, frames.frame(1, AmqpFrames.attachSender(1, "d")));
        feed(g, frames.frame(1, new org.apache.qpid.proton.amqp.transport.End()));
        assertThat(g.linkCount()).isEqualTo(1);
    }

    @Test
    void refusesASecondAttachOnAHandleInUse() throws Exception {
        FrameGuard g = guard();
        feed(g, frames.frame(0, AmqpFrames.attachSender(0, "a")));
        assertThatThrownBy(() -> feed(g, frames.frame(0, AmqpFrames.attachSender(0, "b"))))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> assertThat(v.condition())
                        .isEqualTo("amqp:session:handle-in-use"));
    }

    @Test
    void boundsUnfinishedDeliveriesBeforeAuthenticationAsTheFramesArrive() throws Exception {
        FrameGuard g = guard();
        byte[] chunk = new byte[20_000];
        feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), chunk));
        feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), chunk));
        feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), chunk));
        assertThat(g.bufferedBytes()).isEqualTo(3L * chunk.length);
        assertThatThrownBy(() -> feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), chunk)))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> {
                    assertThat(v.condition()).isEqualTo("amqp:resource-limit-exceeded");
                    assertThat(v.getMessage()).contains("65536 bytes before it has authenticated");
                });
        authenticated = true;
        feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), chunk));
        feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, false), chunk));
        assertThat(g.bufferedBytes()).as("a finished delivery holds nothing").isZero();
    }

    @Test
    void anAbortedOrDetachedDeliveryHoldsNothing() throws Exception {
        FrameGuard g = guard();
        feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 0, true), new byte[1000]));
        org.apache.qpid.proton.amqp.transport.Transfer abort = AmqpFrames.transfer(0, 0, false);
        abort.setAborted(true);
        feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, abort, null));
        assertThat(g.bufferedBytes()).isZero();
        feed(g, frames.frame(AmqpFrames.TYPE_AMQP, 0, AmqpFrames.transfer(0, 1, true), new byte[1000]));
        feed(g, frames.frame(0, AmqpFrames.detach(0)));
        assertThat(g.bufferedBytes()).isZero();
    }

    @Test
    void lowersACreditProtonJCannotHold() throws Exception {
        feed(guard(), frames.frame(0, AmqpFrames.flow(0, 0x80000000L)));
        ByteBuffer body = ByteBuffer.wrap(passed.toByteArray(), 8, passed.size() - 8);
        frames.decoder().setByteBuffer(body);
        Flow flow = (Flow) frames.decoder().readObject();
        assertThat(flow.getLinkCredit().longValue()).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void leavesAnOrdinaryCreditAlone() throws Exception {
        byte[] frame = frames.frame(0, AmqpFrames.flow(0, 5_000));
        feed(guard(), frame);
        assertThat(passed.toByteArray()).isEqualTo(frame);
    }

    @Test
    void refusesFramesOutsideTheSizeLimitsAndMalformedOnes() {
        assertThatThrownBy(() -> feed(guard(), new byte[] {0, 0x10, 0, 1, 2, 0, 0, 0}))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> assertThat(v.getMessage())
                        .contains("1048577 bytes"));
        assertThatThrownBy(() -> feed(guard(), new byte[] {0, 0, 0, 4}))
                .isInstanceOf(FrameGuard.Violation.class);
        // a list claiming more elements than its bytes hold
        ByteBuffer body = ByteBuffer.wrap(new byte[] {0x00, 0x53, 0x10, (byte) 0xc0, 2, (byte) 200, 0x40});
        assertThatThrownBy(() -> feed(guard(), AmqpFrames.raw(AmqpFrames.TYPE_AMQP, 0, body)))
                .isInstanceOfSatisfying(FrameGuard.Violation.class, v -> assertThat(v.condition())
                        .isEqualTo("amqp:decode-error"));
    }

    @Test
    void walksAnArrayOfZeroWidthElementsWithoutIteratingThem() throws Exception {
        // open with one field: array32 of 2^32-1 nulls (zero-width elements), in 9 bytes
        ByteBuffer array = ByteBuffer.allocate(10).put((byte) 0xf0).putInt(5).putInt(-1).put((byte) 0x40);
        array.flip();
        ByteBuffer body = ByteBuffer.allocate(3 + 9 + 10);
        body.put((byte) 0x00).put((byte) 0x53).put((byte) 0x10).put((byte) 0xd0).putInt(4 + 10).putInt(1).put(array);
        body.flip();
        feed(guard(), AmqpFrames.raw(AmqpFrames.TYPE_AMQP, 0, body));
        assertThat(passed.size()).isPositive();
    }
}
