package io.buslane.common.auth;

/**
 * Whether the broker checks what clients present.
 *
 * <ul>
 *   <li>{@link #VALIDATE} (the default): {@code put-token} SAS tokens are checked (signature, expiry, key name,
 *       audience) against the configured {@link SasRule}s, and links need a grant with the right rights.</li>
 *   <li>{@link #ACCEPT_ALL} (an {@code --insecure}-style option, like Microsoft's emulator, which effectively does
 *       not enforce auth): every {@code put-token} is answered 202 whatever its type or content, and every
 *       connection may use every entity with every right, before and without any token. Use only on trusted
 *       networks or for tests. Built with {@link SasValidator#acceptAll()}.</li>
 * </ul>
 */
public enum AuthMode {
    VALIDATE,
    ACCEPT_ALL
}
