package dev.ratelimit.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
            "{a}b}",
            "{a}",
            "{a",
            "a}",
            "}",
            "~a",
            "~",
            "~fQ",
            " spaced id ",
            "ユーザー😀",
            "a\uD800",
            "a\uDC00",
            "a?",
            "x".repeat(10_240));

    @Test
    void plainIdsAreKeptAsIs() {
        assertThat(KeyLayout.STANDALONE.key("user_8421", 60)).isEqualTo("ratelimit:user_8421:60");
        assertThat(KeyLayout.CLUSTER.key("user_8421", 60)).isEqualTo("ratelimit:{user_8421}:60");
        assertThat(KeyLayout.CLUSTER.key("a:b{c", 86_400)).isEqualTo("ratelimit:{a:b{c}:86400");
    }

    @Test
    void idsWithAClosingBraceATildeOrALoneSurrogateAreEncoded() {
        assertThat(RedisKeys.token("a}")).isEqualTo("~AGEAfQ");
        assertThat(RedisKeys.token("~a")).startsWith("~").isNotEqualTo("~a");
        assertThat(RedisKeys.token("a\uD800")).startsWith("~");
        assertThat(RedisKeys.token("😀")).isEqualTo("😀");
    }

    @Test
    void distinctIdsGiveDistinctKeysInBothLayouts() {
        for (KeyLayout layout : KeyLayout.values()) {
            Set<String> keys = new HashSet<>();
            for (String id : IDS) {
                keys.add(layout.key(id, 60));
                keys.add(layout.key(id, 3600));
            }
            assertThat(keys).as(layout.name()).hasSize(IDS.size() * 2);
        }
    }

    @Test
    void clusterTagIsExactlyTheToken() {
        for (String id : IDS) {
            String key = KeyLayout.CLUSTER.key(id, 60);
            int open = key.indexOf('{');
            int close = key.indexOf('}', open + 1);
            assertThat(key.substring(open + 1, close)).as(id).isEqualTo(RedisKeys.token(id));
            assertThat(key.substring(close)).isEqualTo("}:60");
        }
    }

    @Test
    void argumentsAreValidated() {
        assertThatThrownBy(() -> RedisKeys.token("")).hasMessageContaining("subject");
        assertThatThrownBy(() -> KeyLayout.STANDALONE.key("a", 0)).hasMessageContaining("windowSeconds");
    }
}
