/**
 * Claims-based security for the AMQP front end: SAS rules, SAS token parsing and validation, audience
 * normalisation, and the per-connection record of what {@code $cbs put-token} has granted.
 *
 * <p>Everything here is pure logic: no I/O, no threads, no clock. Callers pass {@code nowMs} (epoch milliseconds
 * from the injected {@code io.buslane.common.time.Clock}). See {@code amqp-wire-protocol.md} §2 for the wire
 * side.
 *
 * <p>How the link layer uses it:
 * <ol>
 *   <li>One {@link io.buslane.common.auth.CbsAuthorizer} per broker (built from a
 *       {@link io.buslane.common.auth.SasValidator}); one {@link io.buslane.common.auth.Grants} per connection from
 *       {@link io.buslane.common.auth.CbsAuthorizer#newGrants()}.</li>
 *   <li>On a {@code put-token} request on {@code $cbs}: call
 *       {@link io.buslane.common.auth.CbsAuthorizer#putToken} and answer with its status code and description.</li>
 *   <li>On attach of a sender / receiver / {@code $management} link: call
 *       {@link io.buslane.common.auth.Grants#allows} (or {@link io.buslane.common.auth.Grants#check}) with the link's
 *       address and the needed {@link io.buslane.common.auth.Right}. {@code $cbs} links need no grant.</li>
 *   <li>Arm a timer at {@link io.buslane.common.auth.Grants#nextExpiryMs()}; when it fires, call
 *       {@link io.buslane.common.auth.Grants#removeExpired(long)} and detach the links that are no longer
 *       allowed.</li>
 * </ol>
 *
 * <p>{@link io.buslane.common.auth.AuthFailureThrottle} counts failed authentications (a wrong SAS token, console
 * key or SASL {@code PLAIN} password) per remote address and refuses an address that fails too often for a while;
 * the HTTP APIs answer such a refusal ({@link io.buslane.common.auth.AuthThrottledException}) with 429.
 */
package io.buslane.common.auth;
