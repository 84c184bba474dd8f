package dev.ratelimit.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RedisKeysTest {

    private static final List<String> IDS = List.of(
            "user_8421",
            "a",
            "a:60",
            "a:1:60",
            "a:60t",
            "a:60t#",
            "{a}b}",
            "{a}",
            "{a",
            "a}",
            "}",
            "~a",
            "~",
            "~~a",
            "~fQ",
            " spaced id ",
            "ユーザー😀",
            "a\uD800",
            "a\uDC00",
            "a?",
            "x".repeat(10_240));

    private static final Window MINUTE = Window.of(5, Duration.ofMinutes(1));
    private static final Window HOUR = Window.of(5, Duration.ofHours(1));
    private static final Window TOKENS = Window.tokens(5, Duration.ofMinutes(1));
    private static final Window COARSE = Window.of(5, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1));
    private static final Window COARSE_TOKENS =
            Window.tokens(5, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1));
    private static final List<Window> WINDOWS = List.of(MINUTE, HOUR, TOKENS, COARSE, COARSE_TOKENS);

    private static String key(KeyLayout layout, String user, Window window) {
        return KeySpace.of(layout).key(StoreRequest.Scope.user(user, List.of(window)), window);
    }

    @Test
    void exactRequestWindowsKeepTheirKeyShape() {
        assertThat(key(KeyLayout.STANDALONE, "user_8421", MINUTE)).isEqualTo("ratelimit:user_8421:60");
        assertThat(key(KeyLayout.CLUSTER, "user_8421", MINUTE)).isEqualTo("ratelimit:{user_8421}:60");
        assertThat(key(KeyLayout.CLUSTER, "a:b{c", Window.of(1, Duration.ofDays(1))))
                .isEqualTo("ratelimit:{a:b{c}:86400");
    }

    @Test
    void tokenPrecisionAndSharedKeysHaveTheirOwnShape() {
        KeySpace space = new KeySpace(KeyLayout.CLUSTER, "rl");
        StoreRequest.Scope user = StoreRequest.Scope.user("u", List.of(TOKENS));
        assertThat(space.key(user, TOKENS)).isEqualTo("rl:{u}:60t");
        assertThat(space.sumKey(user, TOKENS)).isEqualTo("rl:{u}:60t#");
        assertThat(space.key(user, COARSE)).isEqualTo("rl:{u}:86400@60");
        assertThat(space.key(user, COARSE_TOKENS)).isEqualTo("rl:{u}:86400t@60");
        StoreRequest.Scope shared = StoreRequest.Scope.shared("openai/gpt-4o", List.of(MINUTE));
        assertThat(space.key(shared, MINUTE)).isEqualTo("rl:{~~openai/gpt-4o}:60");
        assertThatThrownBy(() -> space.sumKey(user, MINUTE)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void idsWithAClosingBraceATildeOrALoneSurrogateAreEncoded() {
        assertThat(RedisKeys.token("a}")).isEqualTo("~AGEAfQ");
        assertThat(RedisKeys.token("~a")).startsWith("~").isNotEqualTo("~a");
        assertThat(RedisKeys.token("a\uD800")).startsWith("~");
        assertThat(RedisKeys.token("😀")).isEqualTo("😀");
    }

    @Test
    void distinctScopesAndWindowsGiveDistinctKeysInBothLayouts() {
        for (KeyLayout layout : KeyLayout.values()) {
            KeySpace space = KeySpace.of(layout);
            Set<String> keys = new HashSet<>();
            int expected = 0;
            for (String id : IDS) {
                for (boolean shared : new boolean[] {false, true}) {
                    StoreRequest.Scope scope = new StoreRequest.Scope(id, List.of(MINUTE), shared);
                    for (Window window : WINDOWS) {
                        keys.add(space.key(scope, window));
                        expected++;
                        if (KeySpace.hasSumKey(window)) {
                            keys.add(space.sumKey(scope, window));
                            expected++;
                        }
                    }
                }
            }
            assertThat(keys).as(layout.name()).hasSize(expected);
        }
    }

    @Test
    void clusterTagIsExactlyTheScopeToken() {
        for (String id : IDS) {
            String key = key(KeyLayout.CLUSTER, id, MINUTE);
            int open = key.indexOf('{');
            int close = key.indexOf('}', open + 1);
            assertThat(key.substring(open + 1, close)).as(id).isEqualTo(RedisKeys.token(id));
            assertThat(key.substring(close)).isEqualTo("}:60");
        }
    }

    @Test
    void argumentsAreValidated() {
        assertThatThrownBy(() -> RedisKeys.token("")).hasMessageContaining("subject");
        assertThatThrownBy(() -> new KeySpace(KeyLayout.CLUSTER, "a{b")).hasMessageContaining("prefix");
    }
}
