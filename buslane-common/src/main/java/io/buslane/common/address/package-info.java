/**
 * The canonical parse of entity addresses ({@link io.buslane.common.address.CanonicalAddress}), shared by
 * authorisation and entity lookup.
 */
package io.buslane.common.address;
