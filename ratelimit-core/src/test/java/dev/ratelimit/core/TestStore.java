package dev.ratelimit.core;

/** A base for test stores that are never peeked at or settled unless a test says so. */
abstract class TestStore implements WindowStore {

    @Override
    public Evaluation peek(StoreRequest request) {
        throw new UnsupportedOperationException("this test store is not peeked at");
    }

    @Override
    public void settle(Settlement settlement) {}
}
