package dev.ratelimit.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class StoreCheckTest {

    @Test
    void theMinimalAclIsExactlyTheCommandsOfTheScript() {
        Set<String> called = new TreeSet<>();
        Matcher matcher = Pattern.compile("\\bcall\\('([A-Za-z]+)'").matcher(SlidingWindowScript.source());
        while (matcher.find()) {
            called.add(matcher.group(1).toUpperCase(Locale.ROOT));
        }
        assertThat(called)
                .as("every command the script calls needs a probe and a place in the ACL rule")
                .containsExactlyInAnyOrderElementsOf(StoreCheck.SCRIPT_COMMANDS);
    }

    @Test
    void theScriptIsCheckedForMemoryBeforeItRuns() {
        assertThat(SlidingWindowScript.source()).startsWith("#!lua flags=\n");
    }

    @Test
    void aclRuleNamesThePrefixAndEveryCommand() {
        assertThat(StoreCheck.aclRule(new KeySpace(KeyLayout.CLUSTER, "svc-a")))
                .startsWith("~svc-a:* -@all +evalsha +eval +time ")
                .endsWith(" +setrange +expire");
    }

    @Test
    void checkKeysStayInsideThePrefixAndAreNoWindowKey() {
        assertThat(KeySpace.of(KeyLayout.STANDALONE).checkKey("z")).isEqualTo("ratelimit:~~:check-z");
        assertThat(KeySpace.of(KeyLayout.CLUSTER).checkKey("z")).isEqualTo("ratelimit:{~~}:check-z");
    }

    @Test
    void policyIsReadFromRespTwoAndThreeReplies() {
        assertThat(StoreCheck.policyOf(List.of("maxmemory-policy", "allkeys-lru")))
                .isEqualTo("allkeys-lru");
        assertThat(StoreCheck.policyOf(Map.of("maxmemory-policy", "noeviction")))
                .isEqualTo("noeviction");
        assertThat(StoreCheck.policyOf(null)).isNull();
    }

    @Test
    void refusedCredentialsAreFoundAmongTheCauses() {
        RuntimeException failure = new RuntimeException(
                "Unable to connect", new IllegalStateException("WRONGPASS invalid username-password pair"));
        assertThat(StoreCheck.credentialsRefused(failure)).startsWith("WRONGPASS");
        assertThat(StoreCheck.credentialsRefused(new RuntimeException("Connection refused")))
                .isNull();
    }

    @Test
    void aRedisThatCannotCompileTheShebangIsNamedAsTooOld() {
        StoreCheck.Commands redis6 = (key, command) -> {
            if (command[0].equals("EVAL")) {
                throw new StoreCheck.ReplyError(
                        "ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'", null);
            }
            return "OK";
        };
        assertThatThrownBy(() -> StoreCheck.run("Test", KeySpace.of(KeyLayout.STANDALONE), redis6))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("needs Redis 7.0 or later");
    }

    @Test
    void everyDeniedCommandIsNamedWithTheRule() {
        StoreCheck.Commands limited = (key, command) -> {
            if (command[0].equals("GETRANGE") || command[0].equals("SETRANGE")) {
                throw new StoreCheck.ReplyError(
                        "NOPERM this user has no permissions to run the '" + command[0].toLowerCase(Locale.ROOT)
                                + "' command",
                        null);
            }
            return "OK";
        };
        assertThatThrownBy(() -> StoreCheck.run("Test", new KeySpace(KeyLayout.STANDALONE, "svc"), limited))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("may not run GETRANGE, SETRANGE")
                .hasMessageContaining("~svc:* -@all");
    }

    @Test
    void refusedCredentialsStopTheCheckAtItsFirstCommand() {
        StoreCheck.Commands refused = (key, command) -> {
            throw new StoreCheck.ReplyError("NOAUTH Authentication required.", null);
        };
        assertThatThrownBy(() -> StoreCheck.run("Test", KeySpace.of(KeyLayout.STANDALONE), refused))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Redis refused the credentials");
    }
}
