/**
 * The management listener: the status page and its JSON, health, metrics, and the admin API for keys.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.admin;

import org.jspecify.annotations.NullMarked;
