/** A Gemini API upstream for the GenAI frameworks' tests: their own Gemini clients call it over HTTP. */
@NullMarked
package dev.ratelimit.testsupport.gemini;

import org.jspecify.annotations.NullMarked;
