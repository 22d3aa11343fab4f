/**
 * The ATOM/XML entity management API of Service Bus ({@code ServiceBusAdministrationClient} in every SDK) on the
 * broker's HTTP port: queues, topics, subscriptions and rules are created ({@code PUT}), read ({@code GET}, with
 * runtime counts), updated ({@code PUT} with {@code If-Match: *}), deleted ({@code DELETE}) and listed (ATOM feeds
 * paged with {@code $skip}/{@code $top}); {@code GET /$namespaceinfo} describes the namespace.
 *
 * <p>{@link io.buslane.management.atom.AdminApi} mounts one fallback route on a Vert.x {@code Router}; everything
 * else is plain Java: {@link io.buslane.management.atom.AdminService} turns an
 * {@link io.buslane.management.atom.AdminRequest} into an {@link io.buslane.management.atom.AdminResponse} by
 * calling the engine (on a worker thread, since entity changes are synced to disk). XML is read with the JDK's DOM
 * parser and written with StAX, in the element order and namespaces the service uses
 * ({@code service-bus-behaviour.md} §5.1). The engine knows nothing of any of this.
 */
package io.buslane.management.atom;
