/** Actuator: the health contributor and the usage endpoint. */
@NullMarked
package dev.ratelimit.spring.boot.actuate;

import org.jspecify.annotations.NullMarked;
