package dev.ratelimit.testsupport.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

class RedisServerExtensionTest {

    /** The servers the classes below saw, in test order. */
    static final List<RedisServer> SEEN = new CopyOnWriteArrayList<>();

    @BeforeEach
    void clear() {
        SEEN.clear();
    }

    static class PerClass {
        @RegisterExtension
        static final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

        @Test
        void first() {
            SEEN.add(redis.get());
            assertThat(redis.get().call("PING")).isEqualTo("PONG");
        }

        @Test
        void second() {
            SEEN.add(redis.get());
        }

        @Nested
        class Inner {
            @Test
            void nested() {
                SEEN.add(redis.get());
                assertThat(redis.get().isRunning()).isTrue();
            }
        }
    }

    static class PerTest {
        @RegisterExtension
        final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

        @Test
        void first() {
            SEEN.add(redis.get());
        }

        @Test
        void second() {
            SEEN.add(redis.get());
        }
    }

    private static void runAllPassing(Class<?> testClass, int tests) {
        Events events = EngineTestKit.engine("junit-jupiter")
                .selectors(selectClass(testClass))
                .execute()
                .testEvents();
        assertThat(events.failed().list()).isEmpty();
        assertThat(events.succeeded().count()).isEqualTo(tests);
    }

    @Test
    @DisplayName("on a static field, one server serves the class and its nested classes, then stops")
    void oneServerPerClass() {
        runAllPassing(PerClass.class, 3);
        assertThat(SEEN).hasSize(3);
        assertThat(SEEN.stream().distinct()).hasSize(1);
        RedisServer server = SEEN.get(0);
        assertThat(server.isRunning()).isFalse();
        assertThat(server.directory()).doesNotExist();
        assertThatThrownBy(PerClass.redis::get).isInstanceOf(IllegalStateException.class);
    }

    @Test
    @DisplayName("on an instance field, each test gets a fresh server, stopped after it")
    void oneServerPerTest() {
        runAllPassing(PerTest.class, 2);
        assertThat(SEEN).hasSize(2);
        assertThat(SEEN.get(0)).isNotSameAs(SEEN.get(1));
        assertThat(SEEN).noneMatch(RedisServer::isRunning);
    }

    @Test
    @DisplayName("outside a test's lifecycle there is no server, and get() says how to register the extension")
    void notRunningOutsideTheLifecycle() {
        assertThatThrownBy(() -> RedisServerExtension.cluster().get())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@RegisterExtension");
    }
}
