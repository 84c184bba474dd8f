/**
 * The conformance kit: {@link dev.ratelimit.testkit.WindowStoreConformanceKit} is the executable
 * specification every {@link dev.ratelimit.core.WindowStore} must pass, ours and third parties'.
 */
@NullMarked
package dev.ratelimit.testkit;

import org.jspecify.annotations.NullMarked;
