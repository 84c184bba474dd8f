/** A store written from {@code docs/writing-a-store.md} alone, as a third party would write it. */
@NullMarked
package com.example.store;

import org.jspecify.annotations.NullMarked;
