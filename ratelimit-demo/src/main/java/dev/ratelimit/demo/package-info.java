/**
 * The runnable demo: an OpenAI-shaped mock chat completions API on embedded Jetty 12, behind an
 * API-key filter and the {@link dev.ratelimit.servlet.RateLimitFilter}; start it with {@link
 * dev.ratelimit.demo.DemoServer#main(String[])}.
 */
@NullMarked
package dev.ratelimit.demo;

import org.jspecify.annotations.NullMarked;
