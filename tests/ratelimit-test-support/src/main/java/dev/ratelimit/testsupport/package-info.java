/**
 * What this repository's tests share beyond Redis: {@link dev.ratelimit.testsupport.RequiredTools}
 * decides what a test does when a tool it drives is not installed; {@link
 * dev.ratelimit.testsupport.RefusedPort} is a port that stays unreachable; {@link
 * dev.ratelimit.testsupport.ModelStub} is what the model API stubs (OpenAI's, Gemini's) share. Not
 * published.
 */
@NullMarked
package dev.ratelimit.testsupport;

import org.jspecify.annotations.NullMarked;
