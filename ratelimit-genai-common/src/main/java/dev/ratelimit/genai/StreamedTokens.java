package dev.ratelimit.genai;

import com.knuddels.jtokkit.api.Encoding;

/**
 * Counts the text of a stream as it passes ({@link TokenCounts#stream()}), so that a stream's tokens are known at
 * any moment without keeping, or counting again, what it produced: settling a stream that broke off
 * costs the count of its last word, whatever its length.
 *
 * <p>The count equals that of the whole text at once. OpenAI's tokenizers first split text into
 * pieces by a pattern (words with their leading space, runs of digits, punctuation, whitespace) and
 * encode each piece alone, so text cut where a piece must begin counts the same in parts. Only the
 * text after the last such place is held: a space, a newline or a punctuation mark (not an
 * apostrophe, which may belong to the word before it) followed by a letter. Text that offers none
 * for {@value #MAX_HELD} characters (a run of letters without spaces or punctuation) is counted as
 * it stands, which may count a token more than the whole text would. Not thread-safe: one per
 * response.
 */
public final class StreamedTokens {

    /** The most characters held without a place to cut them. */
    static final int MAX_HELD = 2_048;

    private final Encoding encoding;
    private final TokenCounts.Rule rule;
    private final StringBuilder held = new StringBuilder();
    private long counted;
    private long codePoints;
    private boolean empty = true;

    StreamedTokens(Encoding encoding, TokenCounts.Rule rule) {
        this.encoding = encoding;
        this.rule = rule;
    }

    /**
     * Adds text the stream produced.
     *
     * @param text the text
     */
    public void append(String text) {
        if (text.isEmpty()) {
            return;
        }
        empty = false;
        codePoints += text.codePointCount(0, text.length());
        int from = Math.max(1, held.length() - 1); // a cut needs the character after it, which may be new
        held.append(text);
        int cut = -1;
        for (int i = held.length() - 2; i >= from; i--) {
            if (cuttable(held, i)) {
                cut = i;
                break;
            }
        }
        if (cut > 0) {
            counted += encoding.countTokensOrdinary(held.substring(0, cut));
            held.delete(0, cut);
        } else if (held.length() > MAX_HELD) {
            counted += encoding.countTokensOrdinary(held.toString());
            held.setLength(0);
        }
    }

    /**
     * Whether a piece of both tokenizers' patterns must begin at {@code i}: a letter follows, and
     * {@code i} holds a space, or follows a newline, or holds a punctuation mark after a letter.
     */
    private static boolean cuttable(CharSequence text, int i) {
        char at = text.charAt(i);
        char before = text.charAt(i - 1);
        if (at == ' ') {
            return Character.isLetter(Character.codePointAt(text, i + 1));
        }
        if (Character.isLetter(Character.codePointAt(text, i))) {
            return before == '\n' || before == '\r';
        }
        if (Character.isSurrogate(at) || Character.isSurrogate(before)) {
            return false;
        }
        return punctuation(at) && Character.isLetter(before) && Character.isLetter(Character.codePointAt(text, i + 1));
    }

    /** Neither a letter, a mark, a number nor whitespace: what both patterns put before a word. */
    private static boolean punctuation(char c) {
        if (c == '\'' || Character.isLetter(c) || Character.isWhitespace(c) || Character.isSpaceChar(c)) {
            return false;
        }
        return switch (Character.getType(c)) {
            case Character.NON_SPACING_MARK,
                    Character.ENCLOSING_MARK,
                    Character.COMBINING_SPACING_MARK,
                    Character.DECIMAL_DIGIT_NUMBER,
                    Character.LETTER_NUMBER,
                    Character.OTHER_NUMBER,
                    Character.CONTROL,
                    Character.UNASSIGNED -> false;
            default -> true;
        };
    }

    /**
     * Returns the count of all the text so far, as {@link TokenCounts#count} counts it whole.
     *
     * @return the count; 0 before any text
     */
    public long count() {
        return empty ? 0 : rule.apply(tokens(), codePoints);
    }

    /** The encoding's tokens of all the text so far (before the counting's rule). */
    long tokens() {
        return held.length() == 0 ? counted : counted + encoding.countTokensOrdinary(held.toString());
    }

    /** The characters held: the text after the last place a piece must begin. */
    int held() {
        return held.length();
    }

    /**
     * Returns whether no text was produced yet.
     *
     * @return whether the stream produced no text
     */
    public boolean isEmpty() {
        return empty;
    }

    @Override
    public String toString() {
        return "StreamedTokens[" + count() + "]";
    }
}
