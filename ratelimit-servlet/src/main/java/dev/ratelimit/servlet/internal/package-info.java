/**
 * Code that {@code ratelimit-servlet} shares with other modules of this project (the gateway): the
 * formatting of the rate-limit headers' values. Not API: its types never appear in a public
 * signature and may change in any release.
 */
@NullMarked
package dev.ratelimit.servlet.internal;

import org.jspecify.annotations.NullMarked;
