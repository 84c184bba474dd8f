package dev.ratelimit.http;

/**
 * The JSON shape of a refusal's body, which {@link RateLimitResponses} writes for its 429, 400 and
 * 503 answers; each API's SDKs read their own shape and raise its message in the exception they
 * throw.
 */
public enum ErrorShape {

    /**
     * The library's own: {@code {"error":"rate_limited","window":"minute","limit":5,
     * "retry_after_seconds":42,"message":"..."}}, {@code {"error":"concurrency_limited",...}}, {@code
     * {"error":"request_too_large",...}} and {@code {"error":"rate_limiter_unavailable",...}}.
     */
    PLAIN,

    /**
     * OpenAI's: {@code {"error":{"message":"...","type":"requests","param":null,
     * "code":"rate_limit_exceeded","window":"minute"}}}, {@code type} being {@code tokens} when a
     * token window tripped; a concurrency cap's code {@code concurrency_limit_exceeded}; a 400's type
     * {@code invalid_request_error}, code {@code request_too_large}; a 503's type {@code
     * server_error}, code {@code rate_limiter_unavailable}.
     */
    OPENAI,

    /**
     * Anthropic's: {@code {"type":"error","error":{"type":"rate_limit_error","message":"..."}}} for a
     * 429, type {@code invalid_request_error} for a 400 and {@code api_error} for a 503.
     */
    ANTHROPIC,

    /**
     * Google's (the Gemini API's): {@code {"error":{"code":429,"message":"...",
     * "status":"RESOURCE_EXHAUSTED","details":[...]}}}, whose details hold a {@code
     * type.googleapis.com/google.rpc.QuotaFailure} with one violation naming what tripped ({@code
     * quotaMetric} {@code ratelimit/<unit>}, {@code quotaId} the window's name, {@code quotaValue}
     * its limit, {@code quotaDimensions} the window and the level: the shared budget's name, or
     * {@code caller} for the caller's own windows) and a {@code
     * type.googleapis.com/google.rpc.RetryInfo} whose {@code retryDelay} is the delay as a protobuf
     * duration to the millisecond, rounded up ({@code "57.200s"}); status {@code INVALID_ARGUMENT}
     * for a 400 and {@code UNAVAILABLE} for a 503.
     */
    GEMINI
}
