/**
 * What both web stacks share that users see: the default {@code TierResolver}, which reads the tier
 * off Spring Security's principal, and the configuration that declares it.
 */
@NullMarked
package dev.ratelimit.spring.boot.web;

import org.jspecify.annotations.NullMarked;
