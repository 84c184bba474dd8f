/**
 * {@link dev.ratelimit.testsupport.openai.OpenAiStub}: an OpenAI-compatible chat completions server on
 * the JDK's HTTP server, for the framework integrations' tests (the frameworks' own clients call it).
 */
@NullMarked
package dev.ratelimit.testsupport.openai;

import org.jspecify.annotations.NullMarked;
