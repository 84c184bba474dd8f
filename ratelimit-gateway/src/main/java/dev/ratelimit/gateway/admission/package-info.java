/**
 * Admission: one reservation per metered request across the tenant and every level it is charged to (team, organisation, per-model limits, upstream cap, share), settled once by how the request ended; concurrency slots, budget alerts and shadow refusals.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.admission;

import org.jspecify.annotations.NullMarked;
