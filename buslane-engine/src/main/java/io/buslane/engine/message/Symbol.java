package io.buslane.engine.message;

import java.util.Objects;

/** A symbolic value (AMQP {@code symbol}), kept distinct from a string so it round-trips unchanged. */
public record Symbol(String value) {
    public Symbol {
        Objects.requireNonNull(value, "value");
    }

    @Override
    public String toString() {
        return value;
    }
}
