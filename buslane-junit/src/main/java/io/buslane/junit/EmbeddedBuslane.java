package io.buslane.junit;

import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the test class against an in-memory broker started once for the class ({@link BuslaneExtension}): inject a
 * {@link BuslaneBroker} or an {@link BuslaneConnectionString} {@code String} into test, lifecycle or constructor
 * parameters. The same as {@code @ExtendWith(BuslaneExtension.class)}, with settings.
 *
 * <pre>{@code
 * @EmbeddedBuslane(config = "/orders-config.json", reset = Reset.MESSAGES)
 * class OrdersTest { ... }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(BuslaneExtension.class)
public @interface EmbeddedBuslane {

    /** A Config.json on the test class path (a resource name, e.g. {@code "/Config.json"}); empty: none. */
    String config() default "";

    /** What is reset after each test. */
    Reset reset() default Reset.TOPOLOGY;
}
