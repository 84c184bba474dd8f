package dev.ratelimit.spring.boot.reactiveapp;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.spring.boot.Scenarios;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The scenarios on WebFlux, with BlockHound installed: any blocking call (a socket read, a lock wait,
 * a sleep) on a Reactor or Netty event-loop thread throws, so a filter that blocked would answer 500
 * and fail the scenarios.
 */
abstract class ReactiveScenarios extends Scenarios {

    static {
        BlockHound.install();
    }

    @Test
    public void blockHoundCatchesBlockingCallsOnEventLoopThreads() {
        assertThatThrownBy(() -> Mono.fromCallable(() -> {
                            Thread.sleep(1);
                            return 1;
                        })
                        .subscribeOn(Schedulers.parallel())
                        .block())
                .hasStackTraceContaining("Blocking call");
    }
}
