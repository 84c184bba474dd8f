/**
 * Code that the core shares with other modules of this project (the gateway): the throttled
 * warning of a failing store. Not API: nothing here appears in a public signature, and it may change
 * in any release.
 */
@NullMarked
package dev.ratelimit.core.internal;

import org.jspecify.annotations.NullMarked;
