/** What the Spring web components share that is not API: it may change in any release. */
@NullMarked
package dev.ratelimit.spring.boot.web.internal;

import org.jspecify.annotations.NullMarked;
