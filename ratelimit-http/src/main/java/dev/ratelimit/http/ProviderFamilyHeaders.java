package dev.ratelimit.http;

/**
 * A family in a model provider's names ({@link HeaderFamily#OPENAI}, {@link
 * HeaderFamily#ANTHROPIC}): their SDKs read a refusal's delay to the millisecond, and the family
 * carries the names of unchecked and shadow windows, which it has none of its own for.
 */
abstract class ProviderFamilyHeaders implements FamilyHeaders {

    @Override
    public final boolean exactDelay() {
        return true;
    }

    @Override
    public final boolean namesUncheckedAndShadowWindows() {
        return true;
    }
}
