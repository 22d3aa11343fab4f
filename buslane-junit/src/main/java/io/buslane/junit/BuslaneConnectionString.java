package io.buslane.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a {@code String} parameter that {@link BuslaneExtension} fills with the broker's connection string:
 * {@code @Test void sends(@BuslaneConnectionString String cs)}.
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface BuslaneConnectionString {
}
