/**
 * OpenAI's API: requests, estimates and events of chat completions, completions, embeddings and responses.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.protocol.openai;

import org.jspecify.annotations.NullMarked;
