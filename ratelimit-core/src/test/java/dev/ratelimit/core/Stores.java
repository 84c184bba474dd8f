package dev.ratelimit.core;

import java.util.function.Function;

/** Test stores that answer from a function and ignore settlements. */
final class Stores {

    private Stores() {}

    static WindowStore answering(Function<StoreRequest, Evaluation> answer) {
        return new TestStore() {
            @Override
            public Evaluation evaluate(StoreRequest request) {
                return answer.apply(request);
            }
        };
    }
}
