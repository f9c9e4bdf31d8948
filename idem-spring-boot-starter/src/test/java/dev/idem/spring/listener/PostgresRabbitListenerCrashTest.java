package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A {@code @RabbitListener} killed with SIGKILL after its transaction committed and before the container acknowledged
 * the message: the effect is there once, and the message, requeued by the broker and delivered to the restarted
 * application, is a duplicate that does not run the method; it is then acknowledged.
 */
class PostgresRabbitListenerCrashTest {
  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String tables = "listeners_" + suffix;
  private final String queue = "listeners-crash-" + suffix;
  private Connection rabbit;
  private Channel admin;
  private ConfigurableApplicationContext context;

  @BeforeEach
  void setUp() throws Exception {
    rabbit = RabbitListenersContract.connect();
    admin = RabbitListenersContract.declare(rabbit, queue, queue + "-dlq");
    TestPostgres.execute("CREATE TABLE " + tables + "_fx (event_id VARCHAR(200) NOT NULL)");
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      admin.queueDelete(queue);
      admin.queueDelete(queue + "-dlq");
      rabbit.close();
    } finally {
      PostgresKafkaListenersTest.dropTables(tables);
    }
  }

  private List<String> arguments() {
    return ListenersContract.arguments(tables, PostgresKafkaListenersTest.postgres(),
        RabbitListenersContract.rabbitProperties(queue));
  }

  @RepeatedTest(3)
  void aKillBetweenTheCommitAndTheAcknowledgementLeavesOneEffectAndTheMessageComesAgainAsADuplicate()
      throws Exception {
    String id = UUID.randomUUID().toString();
    RabbitListenersContract.publish(admin, queue, id, "crash");

    ListenerCrashChild.killAfterTheCommitOf(id, arguments());
    assertThat(TestPostgres.effectCount(tables + "_fx", id)).as("the effect committed before the kill").isEqualTo(1);
    Eventually.await("the broker took the unacknowledged message back", ListenersContract.DEADLINE,
        this::ready, n -> n == 1);

    context = ListenersContract.run(arguments());
    ListenersApp.Outcomes outcomes = context.getBean(ListenersApp.Outcomes.class);
    Eventually.await("the message delivered again, a duplicate", ListenersContract.DEADLINE,
        () -> outcomes.duplicates.contains(id), found -> found);
    context.close(); // an unacknowledged message would go back to the queue now
    context = null;

    assertThat(ready()).as("acknowledged").isZero();
    assertThat(TestPostgres.effectCount(tables + "_fx", id)).isEqualTo(1);
    assertThat(outcomes.processed).doesNotContain(id);
  }

  private long ready() {
    try {
      return admin.queueDeclarePassive(queue).getMessageCount();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
