/**
 * What this repository's tests share beyond Redis: {@link dev.ratelimit.testsupport.RequiredTools}
 * decides what a test does when a tool it drives is not installed; {@link
 * dev.ratelimit.testsupport.RefusedPort} is a port that stays unreachable. The model APIs the tests
 * call are ratelimit-fake-model's. Not published.
 */
@NullMarked
package dev.ratelimit.testsupport;

import org.jspecify.annotations.NullMarked;
