package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section I: bad input fails fast, naming the argument, before any store I/O. */
interface InputValidationRules extends ConformanceSection {

    @Test
    @DisplayName("I1 a null or empty user id is refused before the store is called")
    default void badUser() {
        expectRefused(() -> limiter().check(null, 5, MINUTE), NullPointerException.class, "userId");
        expectRefused(() -> limiter().check("", 5, MINUTE), IllegalArgumentException.class, "userId");
        expectRefused(() -> limiter().checkAsync("", 5, MINUTE), IllegalArgumentException.class, "userId");
    }

    @Test
    @DisplayName("I2 a limit below 1 is refused before the store is called")
    default void badLimit() {
        expectRefused(() -> limiter().check(user("i2"), 0, MINUTE), IllegalArgumentException.class, "limit");
        expectRefused(() -> limiter().check(user("i2"), -1, MINUTE), IllegalArgumentException.class, "limit");
    }

    @Test
    @DisplayName("I3 a null, zero, negative, sub-second or fractional window is refused before the store is called")
    default void badWindow() {
        String user = user("i3");
        expectRefused(() -> limiter().check(user, 5, null), NullPointerException.class, "window");
        expectRefused(() -> limiter().check(user, 5, Duration.ZERO), IllegalArgumentException.class, "window");
        expectRefused(() -> limiter().check(user, 5, Duration.ofSeconds(-1)), IllegalArgumentException.class, "window");
        expectRefused(() -> limiter().check(user, 5, Duration.ofMillis(500)), IllegalArgumentException.class, "window");
        expectRefused(
                () -> limiter().check(user, 5, Duration.ofMillis(1_500)), IllegalArgumentException.class, "window");
    }

    @Test
    @DisplayName("I4 a null or empty window list, or two windows of one length, is refused before the store is called")
    default void badWindowList() {
        String user = user("i4");
        expectRefused(() -> limiter().check(user, (List<Window>) null), NullPointerException.class, "windows");
        expectRefused(() -> limiter().check(user, List.of()), IllegalArgumentException.class, "windows");
        expectRefused(
                () -> limiter().check(user, List.of(new Window("a", 1, MINUTE), new Window("b", 2, MINUTE))),
                IllegalArgumentException.class,
                "windows");
        expectRefused(() -> limiter().check(user, (Tier) null), NullPointerException.class, "tier");
    }

    private void expectRefused(ThrowingCallable call, Class<? extends Throwable> type, String argument) {
        int before = kit().counting.calls();
        assertThatThrownBy(call)
                .as("[I] expected %s naming '%s'", type.getSimpleName(), argument)
                .isInstanceOf(type)
                .hasMessageContaining(argument);
        assertThat(kit().counting.calls())
                .as("[I] the store must not be called")
                .isEqualTo(before);
    }
}
