package io.buslane.amqp.mgmt;

import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.UnsignedLong;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * An AMQP described value with a numeric ({@code ulong}) descriptor and a list as its described value, as the
 * rule descriptions of {@code enumerate-rules} need (§6.3). Proton-j's encoder writes any {@link DescribedType}
 * as {@code 0x00 descriptor value}; its per-descriptor type cache is keyed by the descriptor, so one class can
 * carry every descriptor. Immutable (the list is unmodifiable; null elements allowed).
 */
public final class DescribedValue implements DescribedType {

    private final UnsignedLong descriptor;
    private final List<Object> described;

    public DescribedValue(UnsignedLong descriptor, List<?> described) {
        this.descriptor = Objects.requireNonNull(descriptor, "descriptor");
        this.described = Collections.unmodifiableList(new ArrayList<Object>(described));
    }

    public DescribedValue(long descriptor, List<?> described) {
        this(UnsignedLong.valueOf(descriptor), described);
    }

    @Override
    public UnsignedLong getDescriptor() {
        return descriptor;
    }

    /** The described list (unmodifiable). */
    @Override
    public List<Object> getDescribed() {
        return described;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DescribedValue d && descriptor.equals(d.descriptor) && described.equals(d.described);
    }

    @Override
    public int hashCode() {
        return descriptor.hashCode() * 31 + described.hashCode();
    }

    @Override
    public String toString() {
        return "DescribedValue{0x" + Long.toHexString(descriptor.longValue()) + " " + described + "}";
    }
}
