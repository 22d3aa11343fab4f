/**
 * The web console: static files served from {@code console/} on the classpath at {@code /console/}, and the JSON
 * API they call under {@code /console/api/}, built on the {@link io.buslane.engine.Engine} facade. The API is
 * guarded like the ATOM admin API: a session cookie issued by a login with a SAS key name and key (checked by the
 * broker's {@link io.buslane.common.auth.SasValidator}), or a SAS {@code Authorization} header.
 */
package io.buslane.management.console;
