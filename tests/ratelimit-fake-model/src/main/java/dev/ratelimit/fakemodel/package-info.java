/**
 * A scriptable fake model provider: {@link dev.ratelimit.fakemodel.FakeModel}, an HTTP server that
 * speaks OpenAI's, Anthropic's and Google's Gemini APIs, answers each call with the {@link
 * dev.ratelimit.fakemodel.Behaviour} a test queued or its default (a {@link
 * dev.ratelimit.fakemodel.Reply}, a {@link dev.ratelimit.fakemodel.Failure}, the {@link
 * dev.ratelimit.fakemodel.Echo} of the gateway's mock mode, or a script of its own on the {@link
 * dev.ratelimit.fakemodel.Exchange}), and records every {@link dev.ratelimit.fakemodel.Call}. It
 * depends on no test framework, so the gateway ships it for its built-in mock model. Not published.
 */
@NullMarked
package dev.ratelimit.fakemodel;

import org.jspecify.annotations.NullMarked;
