package dev.idem.examples.payments;

import dev.idem.client.FileJournal;
import dev.idem.client.IdempotentHttpClient;
import dev.idem.client.Intent;
import dev.idem.client.Resumed;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/**
 * A client process for {@link ClientCrashResumeTest}: {@code send BASE JOURNAL KEY ACCOUNT} sends one payment intent
 * with a file journal (the test kills this process while the request is in flight); {@code resume BASE JOURNAL}
 * re-sends every pending intent and prints {@code RESUMED <status> <pending-after>}.
 */
public final class ClientIntentMain {
  private ClientIntentMain() {}

  public static void main(String[] args) throws Exception {
    URI base = URI.create(args[1]);
    FileJournal journal = FileJournal.open(Path.of(args[2]));
    try {
      IdempotentHttpClient client = IdempotentHttpClient.builder().name("crash-client").journal(journal)
          .headers(() -> Map.of("Authorization", "Bearer sk_test_alice", "Content-Type", "application/json"))
          .build();
      if (args[0].equals("send")) {
        System.out.println("SENDING");
        System.out.flush();
        client.send(Intent.post(base.resolve("/payments"), ("{\"account_id\":\"" + args[4]
            + "\",\"amount\":700,\"currency\":\"EUR\"}").getBytes(StandardCharsets.UTF_8)).withKey(args[3]));
        System.out.println("ANSWERED");
      } else {
        for (Resumed r : client.resumePending()) {
          System.out.println("RESUMED " + r.response().map(x -> Integer.toString(x.status())).orElse("failed")
              + " " + r.intent().key().orElse("-") + r.failure().map(f -> " " + f).orElse(""));
        }
        System.out.println("PENDING " + journal.pending().size());
      }
    } finally {
      journal.close();
    }
  }
}
