/**
 * The configuration: the file's model and validation, its reload, the keys managed by the admin API, prices, teams and organisations.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.config;

import org.jspecify.annotations.NullMarked;
