package dev.idem.outbox;

import java.util.List;
import java.util.OptionalLong;

/**
 * One page of a listing of summaries ({@link Outbox#summaries}).
 *
 * @param entries the rows, by {@code seq}, each with its attempt history and without its payload
 * @param nextCursor the cursor for the next page ({@link OutboxQuery#after}), or empty on the last page
 */
public record OutboxSummaryPage(List<OutboxSummary> entries, OptionalLong nextCursor) {}
