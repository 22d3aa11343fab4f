/**
 * The Service Bus runtime REST API (the data plane over HTTP) on the broker's HTTP port: send and batch send
 * ({@code POST .../messages}), peek-lock ({@code POST .../messages/head}), receive-and-delete
 * ({@code DELETE .../messages/head}), and complete, unlock and renew by lock URI
 * ({@code DELETE|PUT|POST .../messages/{messageId}/{lockToken}}), with the {@code BrokerProperties} JSON header
 * and user properties as headers ({@code service-bus-behaviour.md} §5.2).
 *
 * <p>{@link io.buslane.management.rest.RestApi} mounts ordinary routes (ahead of the ATOM API's fallback route).
 * Nothing blocks an event loop: engine futures complete on shard threads and are answered on the request's context;
 * a receive is a one-credit engine receiver with a timer ({@code RestReceive}).
 * {@code RestProperties} maps broker and user properties, and {@code RestBody} unwraps the body of an AMQP-sent
 * message with proton-j's decoder.
 */
package io.buslane.management.rest;
