/**
 * The batch APIs (OpenAI's Batch API and files, Anthropic's Message Batches): a batch admitted as one reservation of its worst case and settled when it ends, by any gateway on the store.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.batch;

import org.jspecify.annotations.NullMarked;
