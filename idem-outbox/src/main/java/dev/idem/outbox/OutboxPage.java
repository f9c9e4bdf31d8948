package dev.idem.outbox;

import java.util.List;
import java.util.OptionalLong;

/**
 * One page of a listing.
 *
 * @param entries the rows, by {@code seq}, each with its attempt history
 * @param nextCursor the cursor for the next page ({@link OutboxQuery#after}), or empty on the last page
 */
public record OutboxPage(List<OutboxEntry> entries, OptionalLong nextCursor) {}
