package dev.ratelimit.fakemodel;

import java.time.Duration;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's built-in mock model: it answers every endpoint with {@link #reply} of the last user
 * text, cut by whole words to the call's output limit (then ending as a model stopped by it),
 * reporting the tokens its {@link Tokens} count, deterministically. Markers in the last user text
 * ask for a misbehaving upstream: {@code [mock:slow]} sends a stream's parts {@link #SLOW} apart,
 * {@code [mock:break]} breaks a stream off halfway, {@code [mock:error]} ends it halfway with the
 * provider's error event, {@code [mock:status=NNN]} (or {@code [mock:429]}, {@code [mock:529]})
 * answers that status in the provider's error shape, a 429 or 503 with a retry hint: 2 seconds on
 * OpenAI's API, 5 on Anthropic's and Gemini's.
 */
public final class Echo implements Behaviour {

    /** The pause between a slow stream's parts. */
    public static final Duration SLOW = Duration.ofMillis(200);

    private static final int MAX_ECHO_CHARS = 60;
    private static final Pattern STATUS = Pattern.compile("\\[mock:(?:status=)?([45][0-9][0-9])]");

    /** How the mock counts tokens: its stand-in for each provider's tokenizer. */
    public interface Tokens {

        /**
         * Returns the tokens of the call's prompt (for embeddings, of its input).
         *
         * @param call the call
         * @return the prompt's tokens
         */
        long input(Call call);

        /**
         * Returns the tokens of a reply's text to the call.
         *
         * @param call the call, for its model and provider
         * @param text the text
         * @return the text's tokens
         */
        long output(Call call, String text);
    }

    private final Tokens tokens;

    /**
     * Returns an echo counting with {@code tokens}.
     *
     * @param tokens how the mock counts
     */
    public Echo(Tokens tokens) {
        this.tokens = tokens;
    }

    /**
     * Returns the mock's reply to a user text: what it said, whitespace collapsed and cut at 60
     * characters, or a greeting when it said nothing.
     *
     * @param said the last user text, or {@code null}
     * @return the reply
     */
    public static String reply(@Nullable String said) {
        if (said == null || said.isBlank()) {
            return "Hello from the ratelimit gateway's mock model.";
        }
        String echoed = said.strip().replaceAll("\\s+", " ");
        if (echoed.length() > MAX_ECHO_CHARS) {
            echoed = echoed.substring(0, MAX_ECHO_CHARS) + "...";
        }
        return "Mock reply from the ratelimit gateway. You said: \"" + echoed + "\"";
    }

    /**
     * Cuts a reply to at most {@code max} tokens, by whole words, as a model stops at its output
     * limit.
     *
     * @param reply the whole reply
     * @param max the most tokens
     * @param count the tokens of a text
     * @return the reply, cut
     */
    public static String cut(String reply, long max, ToLongFunction<String> count) {
        StringBuilder kept = new StringBuilder();
        for (String word : reply.split(" ")) {
            String next = kept.length() == 0 ? word : " " + word;
            if (count.applyAsLong(kept + next) > max) {
                break;
            }
            kept.append(next);
        }
        return kept.toString();
    }

    @Override
    public void answer(Call call, Exchange exchange) throws Exception {
        Api api = call.api();
        if (api == Api.EMBEDDINGS || api == Api.COUNT_TOKENS || api == Api.GEMINI_COUNT_TOKENS || api == Api.OTHER) {
            Reply.text("").usage(Usage.of(tokens.input(call), 0)).answer(call, exchange);
            return;
        }
        String said = call.lastUserText();
        String text = said == null ? "" : said;
        Matcher status = STATUS.matcher(text);
        if (text.contains("[mock:") && status.find()) {
            refuse(call, Integer.parseInt(status.group(1))).answer(call, exchange);
            return;
        }
        String whole = reply(said);
        ToLongFunction<String> count = words -> tokens.output(call, words);
        String kept = cut(whole, call.maxOutputTokens(), count);
        Reply reply = Reply.text(kept)
                .usage(Usage.of(tokens.input(call), count.applyAsLong(kept)))
                .countingOutput(count)
                .finish(kept.equals(whole) ? Reply.Finish.STOP : Reply.Finish.LENGTH);
        int half = reply.parts.size() / 2;
        if (text.contains("[mock:slow]")) {
            reply = reply.pause(SLOW);
        }
        if (text.contains("[mock:break]")) {
            reply = reply.at(half, Reply.Then.BREAK);
        } else if (text.contains("[mock:error]")) {
            reply = reply.at(half, Reply.Then.ERROR);
        }
        reply.answer(call, exchange);
    }

    /** The status asked for, in the provider's error shape, with a retry hint on 429 and 503. */
    private static Failure refuse(Call call, int status) {
        Failure failure = Failure.status(status).message("The mock model answers " + status + " as asked.");
        boolean openAi = call.provider() == Api.Provider.OPENAI;
        if (openAi) {
            failure = failure.type("mock_error").code("mock_" + status);
        }
        if (status == 429 || status == 503) {
            failure = failure.retryAfter(Duration.ofSeconds(openAi ? 2 : 5));
        }
        return failure;
    }
}
