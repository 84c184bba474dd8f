package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.StoreCheck;
import dev.ratelimit.testsupport.RequiredTools;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisTls;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Passwords, ACL users limited to the key prefix and the script's commands, and TLS, with both drivers. */
class SecurityTest {

    private static final String ADMIN = "admin-secret";
    private static final String RULE = StoreCheck.aclRule(KeySpace.of(KeyLayout.STANDALONE));

    private static RedisServer redis;
    private static RedisTls tls;
    private static int tlsPort;

    @BeforeAll
    static void start() {
        RequiredTools.require("apt-get install openssl", RequiredTools.onPath("openssl")); // RedisTls runs it
        tls = RedisTls.generate();
        tlsPort = RedisTls.freePort();
        List<String> arguments = new ArrayList<>();
        user(arguments, "ratelimit on >limited " + RULE);
        // the rule without ZRANGEBYSCORE, which only token windows use
        user(arguments, "partial on >partial " + RULE.replace(" +zrangebyscore", ""));
        user(arguments, "otherprefix on >other " + RULE.replace("~ratelimit:*", "~other:*"));
        arguments.addAll(tls.serverArguments(tlsPort));
        redis = RedisServer.startWithPassword(ADMIN, arguments);
    }

    /** A {@code --user} directive: Redis joins the following words into one config line. */
    private static void user(List<String> arguments, String line) {
        arguments.add("--user");
        arguments.addAll(List.of(line.split(" ")));
    }

    @AfterAll
    static void stop() {
        if (redis != null) { // null when start() skipped the class for a missing tool
            redis.close();
        }
        if (tls != null) {
            tls.delete();
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("an ACL user with exactly the documented rule runs every path of the script")
    void minimalAclUser(Driver driver) {
        try (CloseableWindowStore store =
                driver.standalone(redis.port(), new Driver.Credentials("ratelimit", "limited"), null, Driver.TIMEOUT)) {
            Scenario.runsEveryPath(store);
        }
        assertThat(RULE)
                .isEqualTo("~ratelimit:* -@all +evalsha +eval +time +zremrangebyscore +zcard +zrange +zrangebyscore"
                        + " +zadd +zrem +get +set +del +incrby +decrby +getrange +setrange +expire");
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("a user without one command fails when the store is built, naming the command and the rule")
    void missingCommandFailsAtStartup(Driver driver) {
        assertThat(startupFailure(() -> driver.standalone(
                        redis.port(), new Driver.Credentials("partial", "partial"), null, Driver.TIMEOUT)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("may not run ZRANGEBYSCORE")
                .hasMessageContaining(RULE);
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("a user limited to another key prefix fails when the store is built")
    void otherPrefixFailsAtStartup(Driver driver) {
        assertThat(startupFailure(() -> driver.standalone(
                        redis.port(), new Driver.Credentials("otherprefix", "other"), null, Driver.TIMEOUT)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("may not run")
                .hasMessageContaining("ratelimit:~~:check-");
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("a wrong password fails when the store is built, saying Redis refused the credentials")
    void wrongPasswordFailsAtStartup(Driver driver) {
        assertThat(startupFailure(() -> driver.standalone(
                        redis.port(), new Driver.Credentials("ratelimit", "wrong"), null, Driver.TIMEOUT)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Redis refused the credentials")
                .hasMessageContaining("WRONGPASS");
        assertThat(startupFailure(() ->
                        driver.standalone(redis.port(), new Driver.Credentials(null, "wrong"), null, Driver.TIMEOUT)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Redis refused the credentials");
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("rediss:// to a TLS port, certificates generated for the test, with the minimal ACL user")
    void tls(Driver driver) {
        try (CloseableWindowStore store =
                driver.standalone(tlsPort, new Driver.Credentials("ratelimit", "limited"), tls, Driver.TIMEOUT)) {
            Scenario.runsEveryPath(store);
        }
    }

    /**
     * Builds a store that must fail at startup and returns what it threw. A store that was built
     * anyway is asked for one check, so that the failure says what its first connection found.
     */
    private static Throwable startupFailure(Supplier<CloseableWindowStore> build) {
        CloseableWindowStore store;
        try {
            store = build.get();
        } catch (RuntimeException e) {
            return e;
        }
        try (store) {
            Scenario.runsEveryPath(store);
            throw new AssertionError("the store was built and ran every path of the script");
        } catch (RuntimeException e) {
            throw new AssertionError("the store was built; its first check then failed with " + e, e);
        }
    }
}
