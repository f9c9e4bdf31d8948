package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.idem.core.Idem;
import dev.idem.core.Operation;
import dev.idem.core.PayloadMismatchException;
import dev.idem.core.memory.InMemoryIdempotencyStore;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.spring.Idempotent;
import dev.idem.spring.WithoutPackage;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.DefaultResourceLoader;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** What an {@code @Idempotent} bean method cannot be: each fails the start, naming the method and the way out. */
class MethodStartupErrorsTest {

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class Base {}

  public static class NoKey {
    @Idempotent
    public String run(String id) {
      return id;
    }
  }

  public static class BadKey {
    @Idempotent(key = "#id +")
    public String run(String id) {
      return id;
    }
  }

  public static class FinalMethod {
    @Idempotent(key = "#id")
    public final String run(String id) {
      return id;
    }
  }

  public static class PrivateMethod {
    @Idempotent(key = "#id")
    private String run(String id) {
      return id;
    }

    public String call(String id) {
      return run(id);
    }
  }

  /** Jackson finds nothing to write. */
  public static class Opaque {
    private final int secret = 7;

    @Override
    public String toString() {
      return "Opaque" + secret;
    }
  }

  public static class OpaqueResult {
    @Idempotent(key = "#id")
    public Opaque run(String id) {
      return new Opaque();
    }
  }

  /** Written fine, but Jackson cannot pick one of its constructors to read it back with. */
  public static class NoCreator {
    private final String name;

    public NoCreator(String name, int unused) {
      this.name = name;
    }

    public NoCreator(String name, String unused) {
      this.name = name;
    }

    public String getName() {
      return name;
    }
  }

  /** Written fine; no type information says which class to read back. */
  public interface Shape {
    String getName();
  }

  /** With type information, an interface can be read back. */
  @JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
  @JsonSubTypes(@JsonSubTypes.Type(value = Circle.class, name = "circle"))
  public interface TypedShape {
    String getName();
  }

  public record Circle(String name) implements TypedShape {
    @Override
    public String getName() {
      return name;
    }
  }

  public record Line(String sku, int quantity) {}

  public static class ListOfNoCreator {
    @Idempotent(key = "#id")
    public List<NoCreator> run(String id) {
      return List.of(new NoCreator(id, 1));
    }
  }

  public static class MapOfNoCreator {
    @Idempotent(key = "#id")
    public Map<String, List<NoCreator>> run(String id) {
      return Map.of();
    }
  }

  public static class OptionalOfNoCreator {
    @Idempotent(key = "#id")
    public Optional<NoCreator> run(String id) {
      return Optional.empty();
    }
  }

  public static class ArrayOfNoCreator {
    @Idempotent(key = "#id")
    public NoCreator[] run(String id) {
      return new NoCreator[0];
    }
  }

  public static class KeyOfNoCreator {
    @Idempotent(key = "#id")
    public Map<NoCreator, String> run(String id) {
      return Map.of();
    }
  }

  public static class InterfaceResult {
    @Idempotent(key = "#id")
    public Shape run(String id) {
      return () -> id;
    }
  }

  public static class ListOfInterface {
    @Idempotent(key = "#id")
    public List<Shape> run(String id) {
      return List.of();
    }
  }

  /** What Jackson reads back as it was: each call's second run is a replay equal to the first. */
  public static class Generics {
    static final AtomicInteger RUNS = new AtomicInteger();

    @Idempotent(key = "#id", operation = "generics.lines")
    public Map<String, List<Line>> lines(String id) {
      RUNS.incrementAndGet();
      return Map.of(id, List.of(new Line("a", 1), new Line("b", 2)));
    }

    @Idempotent(key = "#id", operation = "generics.counts")
    public Map<Long, Optional<Line>> counts(String id) {
      RUNS.incrementAndGet();
      return Map.of(7L, Optional.of(new Line(id, 7)));
    }

    @Idempotent(key = "#id", operation = "generics.array")
    public Line[] array(String id) {
      RUNS.incrementAndGet();
      return new Line[] {new Line(id, 3)};
    }

    @Idempotent(key = "#id", operation = "generics.shapes")
    public List<TypedShape> shapes(String id) {
      RUNS.incrementAndGet();
      return List.of(new Circle(id));
    }

    @Idempotent(key = "#id", operation = "generics.untyped")
    public List<Map<String, Object>> untyped(String id) {
      RUNS.incrementAndGet();
      return List.of(Map.of("id", id, "n", 1));
    }
  }

  public static class ObjectResult {
    @Idempotent(key = "#id")
    public Object run(String id) {
      return id;
    }
  }

  public static class AsyncResult {
    @Idempotent(key = "#id")
    public CompletableFuture<String> run(String id) {
      return CompletableFuture.completedFuture(id);
    }
  }

  public static class Phased {
    @Idempotent(key = "#id", mode = IdempotentRoute.Mode.PHASED)
    public String run(String id) {
      return id;
    }
  }

  public static class AtomicWaitInFlight {
    @Idempotent(key = "#id", waitInFlight = "5s")
    public String run(String id) {
      return id;
    }
  }

  public static class KeptStatuses {
    @Idempotent(key = "#id", keepStatuses = 409)
    public String run(String id) {
      return id;
    }
  }

  public static class OwnTransaction {
    @Idempotent(key = "#id")
    @Transactional(propagation = Propagation.REQUIRES_NEW)
    public String run(String id) {
      return id;
    }
  }

  public static class OtherTransactionManager {
    @Idempotent(key = "#id")
    @Transactional("elsewhere")
    public String run(String id) {
      return id;
    }
  }

  /** Joins the record's transaction; a leased method may have a transaction of its own. */
  public static class JoiningTransactions {
    @Idempotent(key = "#id")
    @Transactional
    public String run(String id) {
      return id;
    }

    @Idempotent(key = "#id", mode = IdempotentRoute.Mode.LEASED, operation = "joining.leased")
    @Transactional(propagation = Propagation.REQUIRES_NEW)
    public String leased(String id) {
      return id;
    }
  }

  public record Transfer(String id, long amount, String note) {}

  /** "/amount" instead of "/transfer/amount": the default fingerprint is an object of the arguments by name. */
  public static class PointerPastTheParameter {
    @Idempotent(key = "#transfer.id", fingerprintInclude = "/amount")
    public String run(Transfer transfer) {
      return transfer.id();
    }
  }

  public static class PointersIntoTheParameters {
    @Idempotent(key = "#transfer.id", fingerprintExclude = {"/transfer/note", "/sentAt"})
    public String run(Transfer transfer, long sentAt) {
      return transfer.id() + " " + transfer.amount();
    }
  }

  public static class LeasedOnly {
    @Idempotent(key = "#id", mode = IdempotentRoute.Mode.LEASED)
    public String run(String id) {
      return id;
    }
  }

  public static class Overloads {
    @Idempotent(key = "#p0")
    public String refund(String id) {
      return id;
    }

    @Idempotent(key = "#p0")
    public String refund(String id, long amount) {
      return id + amount;
    }
  }

  public static class ReadOnly {
    @Idempotent(key = "#id")
    @Transactional(readOnly = true)
    public String run(String id) {
      return id;
    }
  }

  /** Two beans of this class would share the operation and the scope of its method. */
  public static class Mailer {
    @Idempotent(key = "#orderId")
    public String send(String orderId) {
      return orderId;
    }
  }

  @Configuration
  static class TwoMailers {
    @Bean
    Mailer customerMailer() {
      return new Mailer();
    }

    @Bean
    Mailer staffMailer() {
      return new Mailer();
    }
  }

  @RestController
  public static class ControllerWithKey {
    @PostMapping("/things")
    @Idempotent(key = "#id")
    public String run(String id) {
      return id;
    }
  }

  public static class Fine {
    @Idempotent(key = "#id")
    public String run(String id) {
      return id;
    }

    @Idempotent(key = "#id", operation = "fine.touch")
    public void touch(String id) {}
  }

  public interface Greeter {
    String greet(String id);
  }

  /** Declared as a {@link Greeter} by its {@code @Bean} method: the startup scan cannot see its annotation. */
  public static class CountingGreeter implements Greeter {
    final AtomicInteger calls = new AtomicInteger();

    @Override
    @Idempotent(key = "#id")
    public String greet(String id) {
      return "hello " + id + " #" + calls.incrementAndGet();
    }
  }

  /** Behind a JDK proxy when {@code spring.aop.proxy-target-class=false}: its class shows only {@link Greeter}. */
  public static class NoKeyGreeter implements Greeter {
    @Override
    @Idempotent(ttl = "1h")
    public String greet(String id) {
      return "hello " + id;
    }
  }

  /** As {@link NoKeyGreeter}, with a key and a policy of its own. */
  public static class HourGreeter implements Greeter {
    final AtomicInteger calls = new AtomicInteger();

    @Override
    @Idempotent(key = "#id", ttl = "1h")
    public String greet(String id) {
      return "hello " + id + " #" + calls.incrementAndGet();
    }
  }

  @Configuration
  static class HiddenBean {
    @Bean
    Greeter greeter() {
      return new CountingGreeter();
    }
  }

  /** The application's only transaction manager, on a DataSource that is not the idempotency store's. */
  @Configuration
  static class TransactionManagerElsewhere {
    @Bean
    PlatformTransactionManager transactionManager() {
      return new DataSourceTransactionManager(new DriverManagerDataSource("jdbc:h2:mem:elsewhere-" + UUID.randomUUID()
          + ";DB_CLOSE_DELAY=-1"));
    }
  }

  private static Throwable start(Class<?>... beans) {
    return catchThrowable(() -> {
      try (ConfigurableApplicationContext ignored = run(List.of(), beans)) {
        // started: no failure
      }
    });
  }

  private static ConfigurableApplicationContext run(Class<?> bean) {
    return run(List.of(), bean);
  }

  private static ConfigurableApplicationContext run(List<String> properties, Class<?>... beans) {
    List<Class<?>> sources = new ArrayList<>(List.of(Base.class));
    sources.addAll(List.of(beans));
    List<String> args = new ArrayList<>(List.of(
        "--spring.datasource.url=jdbc:h2:mem:startup-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.store.initialize-schema=true"));
    args.addAll(properties);
    return new SpringApplicationBuilder(sources.toArray(Class<?>[]::new)).web(WebApplicationType.NONE)
        .run(args.toArray(String[]::new));
  }

  private static String messages(Throwable t) {
    List<String> all = new ArrayList<>();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.add(String.valueOf(c.getMessage()));
    }
    return String.join(" | ", all);
  }

  @Test
  void aMethodWithoutAKeyExpression() {
    assertThat(messages(start(NoKey.class))).contains("@Idempotent on " + NoKey.class.getName() + ".run needs a key")
        .contains("#order.id");
  }

  @Test
  void aKeyThatIsNotSpel() {
    assertThat(messages(start(BadKey.class))).contains("@Idempotent(key = \"#id +\") on " + BadKey.class.getName()
        + ".run is not a valid SpEL expression");
  }

  @Test
  void methodsAProxyCannotIntercept() {
    assertThat(messages(start(FinalMethod.class))).contains(FinalMethod.class.getName() + ".run must be on a method"
        + " that is not final, private or static");
    assertThat(messages(start(PrivateMethod.class))).contains(PrivateMethod.class.getName() + ".run must be on a"
        + " method that is not final, private or static");
  }

  @Test
  void returnTypesTheObjectMapperCannotKeep() {
    assertThat(messages(start(OpaqueResult.class))).contains("@Idempotent on " + OpaqueResult.class.getName()
        + ".run: the application's ObjectMapper cannot keep its return type");
    assertThat(messages(start(ObjectResult.class))).contains(ObjectResult.class.getName() + ".run: its return type"
        + " java.lang.Object cannot be kept");
    assertThat(messages(start(AsyncResult.class))).contains(AsyncResult.class.getName() + ".run: its return type"
        + " java.util.concurrent.CompletableFuture<java.lang.String> cannot be kept");
  }

  @Test
  void containersAndAbstractTypesTheObjectMapperCannotReadBack() {
    for (Class<?> bean : List.of(ListOfNoCreator.class, MapOfNoCreator.class, OptionalOfNoCreator.class,
        ArrayOfNoCreator.class)) {
      assertThat(messages(start(bean))).as(bean.getSimpleName()).contains("@Idempotent on " + bean.getName()
          + ".run: the application's ObjectMapper cannot keep its return type").contains("Jackson cannot create an"
          + " instance of").contains("NoCreator");
    }
    assertThat(messages(start(KeyOfNoCreator.class))).contains(KeyOfNoCreator.class.getName() + ".run: the"
        + " application's ObjectMapper cannot keep its return type").contains("cannot read back its map keys of");
    for (Class<?> bean : List.of(InterfaceResult.class, ListOfInterface.class)) {
      assertThat(messages(start(bean))).as(bean.getSimpleName()).contains(bean.getName() + ".run: the"
          + " application's ObjectMapper cannot keep its return type").contains("is abstract (or an interface) and"
          + " carries no type information");
    }
  }

  @Test
  void genericReturnTypesJacksonReadsBackStart() {
    try (ConfigurableApplicationContext context = run(Generics.class)) {
      Generics g = context.getBean(Generics.class);
      assertThat(g.lines("a")).isEqualTo(g.lines("a")).isEqualTo(Map.of("a", List.of(new Line("a", 1),
          new Line("b", 2))));
      assertThat(g.counts("b")).isEqualTo(g.counts("b")).isEqualTo(Map.of(7L, Optional.of(new Line("b", 7))));
      assertThat(g.array("c")).isEqualTo(g.array("c")).containsExactly(new Line("c", 3));
      assertThat(g.shapes("d")).isEqualTo(g.shapes("d")).containsExactly(new Circle("d"));
      assertThat(g.untyped("e")).isEqualTo(g.untyped("e")).containsExactly(Map.of("id", "e", "n", 1));
      assertThat(Generics.RUNS).as("each second call replayed").hasValue(5);
    }
  }

  @Test
  void attributesThatDoNotApply() {
    assertThat(messages(start(Phased.class))).contains("@Idempotent(mode = PHASED) on " + Phased.class.getName()
        + ".run: phased mode is for HTTP routes");
    assertThat(messages(start(KeptStatuses.class))).contains(KeptStatuses.class.getName()
        + ".run: keepStatuses and neverKeepStatuses apply to HTTP routes");
    assertThat(messages(start(ControllerWithKey.class))).contains(ControllerWithKey.class.getName()
        + ".run sets [key], which only bean methods read");
    assertThat(messages(start(AtomicWaitInFlight.class))).contains("@Idempotent on "
        + AtomicWaitInFlight.class.getName() + ".run: waitInFlight applies to PHASED and LEASED modes only");
  }

  @Test
  void anAtomicMethodThatWouldCommitApartFromItsRecord() {
    assertThat(messages(start(OwnTransaction.class))).contains("@Idempotent on " + OwnTransaction.class.getName()
        + ".run is also @Transactional with a propagation that leaves the transaction its record is written in");
    assertThat(messages(start(OtherTransactionManager.class))).contains("@Idempotent on "
        + OtherTransactionManager.class.getName() + ".run is @Transactional(\"elsewhere\")");
    try (ConfigurableApplicationContext context = run(JoiningTransactions.class)) {
      JoiningTransactions joining = context.getBean(JoiningTransactions.class);
      assertThat(joining.run("a")).isEqualTo("a");
      assertThat(joining.leased("b")).isEqualTo("b");
    }
  }

  @Test
  void atomicMethodsWhoseTransactionTheStoreCannotJoin() {
    assertThat(messages(start(Fine.class, TransactionManagerElsewhere.class))).contains("no single Spring"
        + " transaction manager manages the idempotency store's DataSource, so the ATOMIC methods [")
        .contains(Fine.class.getName() + ".touch").contains("would run in the store's own transaction")
        .contains("set idem.methods.allow-separate-commits=true");
    try (ConfigurableApplicationContext context = run(List.of("--idem.methods.allow-separate-commits=true"),
        Fine.class, TransactionManagerElsewhere.class)) {
      Fine fine = context.getBean(Fine.class);
      assertThat(fine.run("a")).as("runs in the store's own transaction").isEqualTo("a");
    }
    assertThat(start(LeasedOnly.class, TransactionManagerElsewhere.class)).as("LEASED methods need no join")
        .isNull();
  }

  @Test
  void fingerprintPointersThatNameNoParameter() throws Exception {
    assertThat(messages(start(PointerPastTheParameter.class))).contains("@Idempotent(fingerprintInclude ="
        + " \"/amount\") on " + PointerPastTheParameter.class.getName() + ".run names no parameter of the method")
        .contains("[transfer]").contains("\"/transfer/amount\"");
    try (ConfigurableApplicationContext context = run(PointersIntoTheParameters.class)) {
      PointersIntoTheParameters bean = context.getBean(PointersIntoTheParameters.class);
      assertThat(bean.run(new Transfer("t-1", 5, "first"), 1)).isEqualTo("t-1 5");
      assertThat(bean.run(new Transfer("t-1", 5, "a retry"), 2)).as("note and sentAt excluded").isEqualTo("t-1 5");
      assertThat(catchThrowable(() -> bean.run(new Transfer("t-1", 6, "first"), 1)))
          .isInstanceOf(PayloadMismatchException.class);
    }
    Idempotent a = PointerPastTheParameter.class.getMethod("run", Transfer.class).getAnnotation(Idempotent.class);
    assertThat(catchThrowable(() -> IdempotentMethod.checkPointers("Some.run", a, new String[] {"p0"}, false)))
        .hasMessageContaining("@Idempotent(fingerprintInclude = \"/amount\") on Some.run names no parameter")
        .hasMessageContaining("[p0]").hasMessageContaining("the parameter names are not known");
    Idempotent byPosition = ByPosition.class.getMethod("run", Transfer.class).getAnnotation(Idempotent.class);
    assertThatCode(() -> IdempotentMethod.checkPointers("Some.run", byPosition, new String[] {"p0"}, false))
        .as("without names, a pointer by position selects what it names").doesNotThrowAnyException();
  }

  /** A pointer by position, as the arguments go without parameter names. */
  static class ByPosition {
    @Idempotent(key = "#p0.id", fingerprintInclude = "/p0/amount")
    public String run(Transfer transfer) {
      return transfer.id();
    }
  }

  @Test
  void overloadsOnOneOperation() {
    assertThat(messages(start(Overloads.class))).contains("is declared twice: on public java.lang.String "
        + Overloads.class.getName() + ".refund(java.lang.String) and on public java.lang.String "
        + Overloads.class.getName() + ".refund(java.lang.String,long)");
  }

  @Test
  void anAtomicMethodInAReadOnlyTransaction() {
    assertThat(messages(start(ReadOnly.class))).contains("@Idempotent on " + ReadOnly.class.getName() + ".run is"
        + " @Transactional(readOnly = true): its record is written in the transaction the method joins, which cannot"
        + " be read-only. Drop readOnly, or use mode = LEASED");
  }

  @Test
  void twoBeansOfOneClassOnOneOperation() {
    assertThat(messages(start(TwoMailers.class))).contains("@Idempotent method public java.lang.String "
        + Mailer.class.getName() + ".send(java.lang.String) is called on the beans [customerMailer, staffMailer],"
        + " which are of one class, with one operation (the default) and one scope", "Give each bean its own"
        + " operation (a subclass per bean that overrides the method with @Idempotent(operation = \"...\"), distinct"
        + " for each), or keep one bean");
  }

  @Test
  void aMethodTheScanCouldNotSeeIsReadAtItsFirstCall() {
    try (ConfigurableApplicationContext context = run(HiddenBean.class)) {
      Greeter greeter = context.getBean(Greeter.class);
      assertThat(greeter.greet("a")).isEqualTo("hello a #1");
      assertThat(greeter.greet("a")).isEqualTo("hello a #1");
      assertThat(greeter.greet("b")).isEqualTo("hello b #2");
    }
  }

  @Test
  void methodsOfBeansBehindJdkProxiesAreCheckedAtTheStart() {
    List<String> jdkProxies = List.of("--spring.aop.proxy-target-class=false");
    assertThat(messages(catchThrowable(() -> run(jdkProxies, NoKeyGreeter.class).close())))
        .contains("@Idempotent on " + NoKeyGreeter.class.getName() + ".greet needs a key");

    try (ConfigurableApplicationContext context = run(jdkProxies, HourGreeter.class)) {
      Greeter greeter = context.getBean(Greeter.class);
      assertThat(Proxy.isProxyClass(greeter.getClass())).isTrue();
      assertThat(greeter.greet("a")).isEqualTo("hello a #1");
      assertThat(greeter.greet("a")).isEqualTo("hello a #1");
      assertThat(context.getBean(Idem.class).policy(Operation.of(HourGreeter.class.getName() + "#greet")).ttl())
          .as("the annotation's policy, registered at the start").isEqualTo(Duration.ofHours(1));
    }
  }

  /** The application's own {@code Idem}: the auto-configured one, and its checks, step aside. */
  @Configuration
  static class OwnIdem {
    @Bean
    Idem idem() {
      return Idem.builder().name("own").store(new InMemoryIdempotencyStore("own")).build();
    }
  }

  @Test
  void beanMethodsWithoutJacksonFailTheStartEvenWithTheApplicationsOwnIdem() {
    for (List<Class<?>> beans : List.<List<Class<?>>>of(List.of(Fine.class), List.of(Fine.class, OwnIdem.class))) {
      List<Class<?>> sources = new ArrayList<>(List.of(Base.class));
      sources.addAll(beans);
      Throwable failure = catchThrowable(() -> {
        try (ConfigurableApplicationContext ignored = new SpringApplicationBuilder(sources.toArray(Class<?>[]::new))
            .resourceLoader(new DefaultResourceLoader(new WithoutPackage("tools.jackson.")))
            .web(WebApplicationType.NONE)
            .run("--spring.datasource.url=jdbc:h2:mem:startup-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                "--idem.store.initialize-schema=true")) {
          // started: no failure
        }
      });

      assertThat(messages(failure)).as("%s", beans).contains("@Idempotent bean methods (operations [",
          "fine.touch", "Jackson 3, which is not on the classpath", "spring-boot-starter-jackson");
    }
  }

  @Test
  void aVoidMethodAndAPlainOneStart() {
    try (ConfigurableApplicationContext context = run(Fine.class)) {
      Fine fine = context.getBean(Fine.class);
      assertThat(fine.run("a")).isEqualTo("a");
      fine.touch("b");
    }
  }
}
