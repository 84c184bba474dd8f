package dev.ratelimit.springboot.lines;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.util.List;

/** A private Redis whose default user needs a password, with an application user given as {@code spring.data.redis.url}. */
final class AclRedis {

    private AclRedis() {}

    /** Starts the server with the ACL user {@code app} (password {@code app-secret}), allowed every command, key and channel. */
    static RedisServer start() {
        return RedisServer.startWithPassword(
                "admin-secret", List.of("--user", "app", "on", ">app-secret", "~*", "&*", "+@all"));
    }

    /** The {@code spring.data.redis.url} property that logs in as {@code app}. */
    static String url(RedisServer redis) {
        return "spring.data.redis.url=redis://app:app-secret@" + redis.host() + ":" + redis.port();
    }
}
