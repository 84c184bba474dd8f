package dev.ratelimit.spring.boot;

import dev.ratelimit.spring.boot.RateLimitProperties.StoreType;
import java.util.Locale;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

/**
 * Chooses the store: {@code ratelimit.store} when set; else Lettuce when its adapter, driver and
 * spring-boot-data-redis are on the class path and {@code spring.data.redis.*} names a server, else
 * Jedis likewise, else in-memory.
 */
abstract class StoreCondition extends SpringBootCondition {

    static final String[] LETTUCE_CLASSES = {
        "dev.ratelimit.redis.lettuce.LettuceWindowStore",
        "io.lettuce.core.RedisClient",
        "org.springframework.boot.data.redis.autoconfigure.DataRedisProperties"
    };
    static final String[] JEDIS_CLASSES = {
        "dev.ratelimit.redis.jedis.JedisWindowStore",
        "redis.clients.jedis.UnifiedJedis",
        "org.springframework.boot.data.redis.autoconfigure.DataRedisProperties"
    };
    static final String[] IN_MEMORY_CLASSES = {"dev.ratelimit.inmemory.InMemoryWindowStore"};

    private static final String[] REDIS_SERVER_PROPERTIES = {
        "spring.data.redis.url",
        "spring.data.redis.host",
        "spring.data.redis.port",
        "spring.data.redis.cluster.nodes[0]",
        "spring.data.redis.cluster.nodes",
        "spring.data.redis.sentinel.master"
    };

    private final StoreType type;

    StoreCondition(StoreType type) {
        this.type = type;
    }

    /** The store the environment and class path choose. */
    static StoreType chosen(Environment environment, ClassLoader classLoader) {
        String configured = environment.getProperty("ratelimit.store");
        if (configured != null && !configured.isBlank()) {
            String normalized = configured.trim().toUpperCase(Locale.ROOT).replace('-', '_');
            try {
                return StoreType.valueOf(normalized);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "ratelimit.store must be in-memory, lettuce or jedis, was '" + configured + "'", e);
            }
        }
        if (redisConfigured(environment)) {
            if (present(LETTUCE_CLASSES, classLoader)) {
                return StoreType.LETTUCE;
            }
            if (present(JEDIS_CLASSES, classLoader)) {
                return StoreType.JEDIS;
            }
        }
        return StoreType.IN_MEMORY;
    }

    static boolean redisConfigured(Environment environment) {
        for (String property : REDIS_SERVER_PROPERTIES) {
            if (environment.containsProperty(property)) {
                return true;
            }
        }
        return false;
    }

    static boolean present(String[] classes, ClassLoader classLoader) {
        for (String name : classes) {
            if (!ClassUtils.isPresent(name, classLoader)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        ClassLoader classLoader = context.getClassLoader();
        StoreType chosen = chosen(
                context.getEnvironment(), classLoader == null ? StoreCondition.class.getClassLoader() : classLoader);
        return chosen == type
                ? ConditionOutcome.match("ratelimit store is " + chosen)
                : ConditionOutcome.noMatch("ratelimit store is " + chosen + ", not " + type);
    }

    /** Matches when the Lettuce store is chosen. */
    static final class Lettuce extends StoreCondition {
        Lettuce() {
            super(StoreType.LETTUCE);
        }
    }

    /** Matches when the Jedis store is chosen. */
    static final class Jedis extends StoreCondition {
        Jedis() {
            super(StoreType.JEDIS);
        }
    }

    /** Matches when the in-memory store is chosen. */
    static final class InMemory extends StoreCondition {
        InMemory() {
            super(StoreType.IN_MEMORY);
        }
    }
}
