package dev.idem.spring.boot;

import dev.idem.core.Idem;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.core.PhasedOperation;
import dev.idem.core.RecordKey;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.KeyProvider;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.servlet.IdempotencyFilter;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.servlet.spi.ScopeResolver;
import dev.idem.servlet.spi.TransactionBoundary;
import dev.idem.spring.internal.AnnotatedRoutes;
import dev.idem.spring.internal.BackgroundWork;
import dev.idem.spring.internal.HandlerStart;
import dev.idem.spring.internal.SpringDataSourceTransactions;
import dev.idem.spring.internal.SpringTransactionBoundary;
import dev.idem.spring.method.IdempotentMethods;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * Idem on the application's {@link DataSource}: a {@link JdbcIdempotencyStore} (dialect detected), an {@link Idem}
 * with every {@link PhasedOperation} bean and the policies of {@code @Idempotent} methods, the servlet filter, the
 * Spring transaction join for atomic routes, and the completer and purge running with the application. Every bean
 * backs off when the application defines its own.
 */
@AutoConfiguration(after = {DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class})
@ConditionalOnClass({Idem.class, JdbcIdempotencyStore.class})
@ConditionalOnProperty(prefix = "idem", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdemProperties.class)
public class IdemAutoConfiguration {
  private static final System.Logger LOG = System.getLogger(IdemAutoConfiguration.class.getName());

  @Bean
  @ConditionalOnMissingBean(IdempotencyStore.class)
  @ConditionalOnSingleCandidate(DataSource.class)
  public JdbcIdempotencyStore idempotencyStore(DataSource dataSource, IdemProperties properties) {
    properties.validate();
    // the table is checked once the Idem bean knows that something uses it (see checkSchema)
    return JdbcIdempotencyStore.builder(dataSource).name(properties.getName())
        .table(properties.getStore().getTable()).lockTimeout(properties.getStore().getLockTimeout())
        .createSchemaIfMissing(properties.getStore().isInitializeSchema()).checkSchema(false).build();
  }

  /**
   * Fails startup, as HikariCP does, when an application that uses the record table (it has {@code @Idempotent}
   * methods or phased operations) finds it missing, rather than answer every idempotent request with an error.
   */
  static void checkSchema(IdempotencyStore store, IdemProperties properties) {
    if (!(store instanceof JdbcIdempotencyStore) || properties.getStore().isInitializeSchema()) {
      return;
    }
    try {
      ((JdbcIdempotencyStore) store).checkSchema();
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + ". With Spring Boot: set idem.store.initialize-schema=true,"
          + " or create the table (named by idem.store.table, here " + properties.getStore().getTable() + ")"
          + " with your migration tool", e);
    }
  }

  /**
   * Envelope encryption of the kept answers, when {@code idem.encryption.enabled=true}: under the
   * {@link KeyProvider} bean if there is one (a KMS), else under the keyring the properties name.
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "idem.encryption", name = "enabled", havingValue = "true")
  public Encryption idemEncryption(IdemProperties properties, ObjectProvider<KeyProvider> keyProvider) {
    IdemProperties.Encryption settings = properties.getEncryption();
    // several KeyProvider beans and none primary: fail rather than fall back to a local keyring
    KeyProvider provider = keyProvider.getIfAvailable();
    settings.validate(provider != null);
    if (provider == null) {
      if (settings.hasKeyringText()) {
        provider = Keyring.parse(settings.getKeyring());
      } else if (settings.isCreateKeyringFile()) {
        provider = Keyring.loadOrCreate(settings.getKeyringFile(), settings.getNewKeyId());
      } else {
        provider = Keyring.load(settings.getKeyringFile());
      }
    }
    LOG.log(System.Logger.Level.INFO, "Idem '" + properties.getName() + "': kept answers are sealed at rest under "
        + provider);
    return Encryption.builder(provider).dataKeyUses(settings.getDataKeyUses())
        .dataKeyLifetime(settings.getDataKeyLifetime()).build();
  }

  /** The {@code Idem} on the one {@link IdempotencyStore} bean (or the {@code @Primary} one among several). */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnSingleCandidate(IdempotencyStore.class)
  public Idem idem(IdempotencyStore store, IdemProperties properties, ObjectProvider<PhasedOperation> phased,
      ObjectProvider<IdemListener> listeners, ObjectProvider<Clock> clock, ObjectProvider<Encryption> encryption,
      ListableBeanFactory beans) {
    properties.validate();
    OperationPolicy defaults = defaults(properties);
    Idem.Builder builder = Idem.builder().name(properties.getName()).store(store).defaultPolicy(defaults)
        .clock(clock.getIfAvailable(Clock::systemUTC));
    listeners.orderedStream().forEach(builder::listener);
    // several Encryption beans and none primary: fail rather than keep answers in plaintext
    Encryption sealing = encryption.getIfAvailable();
    if (sealing != null) {
      builder.encryption(sealing).sealFieldHashes(properties.getEncryption().isSealFieldHashes());
    }
    Map<String, PhasedOperation> operations = phased.orderedStream()
        .collect(Collectors.toMap(p -> p.operation().name(), Function.identity(), (a, b) -> {
          throw new IllegalStateException("two PhasedOperation beans for " + a.operation());
        }));
    operations.values().forEach(builder::phased);
    List<AnnotatedRoutes.Entry> routes = AnnotatedRoutes.scan(beans, defaults);
    Map<Operation, OperationPolicy> methods = IdempotentMethods.policies(beans, defaults);
    methods.forEach(builder::policy);
    if (!routes.isEmpty() || !operations.isEmpty() || !methods.isEmpty()) {
      checkSchema(store, properties);
    }
    for (AnnotatedRoutes.Entry entry : routes) {
      builder.policy(entry.route().operation(), entry.policy());
      if (entry.route().mode() == IdempotentRoute.Mode.PHASED
          && !operations.containsKey(entry.route().operation().name())) {
        throw new IllegalStateException("@Idempotent(mode = PHASED) on " + entry.source() + " needs a PhasedOperation"
            + " bean for operation '" + entry.route().operation() + "'; found: " + operations.keySet());
      }
    }
    return builder.build();
  }

  /** The operation policy the {@code idem.default-*} properties give. */
  public static OperationPolicy defaults(IdemProperties properties) {
    return OperationPolicy.builder().ttl(properties.getDefaultTtl()).retention(properties.getDefaultRetention())
        .lease(properties.getDefaultLease())
        .resumeCap(properties.getDefaultResumeCapAttempts(), properties.getDefaultResumeCapAge()).build();
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnBean(Idem.class)
  public BackgroundWork idemBackgroundWork(Idem idem, IdemProperties properties, ObjectProvider<Clock> clock) {
    IdemProperties.Completer c = properties.getCompleter();
    IdemProperties.Purge p = properties.getPurge();
    return new BackgroundWork(idem, clock.getIfAvailable(Clock::systemUTC), c.isEnabled(), c.getInterval(),
        c.getBatchSize(), p.isEnabled(), p.getInterval(), p.getBatchSize());
  }

  /** The OpenAPI fragment of the HTTP contract, for the application to merge into its own API description. */
  @Bean
  @ConditionalOnMissingBean
  public IdemOpenApi idemOpenApi(IdemProperties properties) {
    return new IdemOpenApi(properties.getFilter().getMismatchStatus());
  }

  /**
   * Without Jackson 3 the advisor of {@code @Idempotent} bean methods is not configured (it keeps return values
   * through Jackson), so such a method would run as a plain one, every call: the start fails instead, whether the
   * {@code Idem} is this configuration's or the application's own.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingClass("tools.jackson.databind.ObjectMapper")
  static class MethodsWithoutJackson {
    @Bean
    static SmartInitializingSingleton idemMethodsNeedJackson(ListableBeanFactory beans,
        ObjectProvider<IdemProperties> properties) {
      return () -> {
        Map<Operation, OperationPolicy> methods = IdempotentMethods.policies(beans,
            defaults(properties.getObject()));
        if (!methods.isEmpty()) {
          throw new IllegalStateException("@Idempotent bean methods (operations " + methods.keySet() + ") keep"
              + " their return values through Jackson 3, which is not on the classpath, so they would run as plain"
              + " methods; add spring-boot-starter-jackson");
        }
      };
    }
  }

  /** The filter and what it plugs in; only in servlet web applications. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(IdempotencyFilter.class)
  static class Web {

    /** Marks the start of every {@code @Idempotent} method, so that refusals of Spring MVC's are not kept. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static HandlerStart.PostProcessor idemHandlerStart() {
      return new HandlerStart.PostProcessor();
    }

    /** Serves the OpenAPI fragment on GET at {@code idem.openapi.path}, when that property is set. */
    @Bean
    @ConditionalOnProperty(prefix = "idem.openapi", name = "path")
    ServletRegistrationBean<HttpServlet> idemOpenApiServlet(IdemOpenApi openApi, IdemProperties properties) {
      byte[] body = openApi.json().getBytes(StandardCharsets.UTF_8);
      HttpServlet servlet = new HttpServlet() {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
          response.setContentType(IdemOpenApi.MEDIA_TYPE);
          response.setContentLength(body.length);
          response.getOutputStream().write(body);
        }
      };
      ServletRegistrationBean<HttpServlet> registration =
          new ServletRegistrationBean<>(servlet, properties.getOpenapi().getPath());
      registration.setName("idemOpenApi");
      return registration;
    }

    @Bean
    @ConditionalOnMissingBean
    ScopeResolver idemScopeResolver(IdemProperties properties) {
      String header = properties.getFilter().getScopeHeader();
      return header == null || header.isBlank() ? ScopeResolver.principal() : ScopeResolver.header(header.trim());
    }

    /** The 401 detail when the scope is the authenticated principal, the default: the three ways to choose. */
    private static final String NO_PRINCIPAL = "idempotent requests need a scope, and this request has no"
        + " authenticated principal (HttpServletRequest.getUserPrincipal() is null). Choose one of three: authenticate"
        + " callers (for example with Spring Security), set idem.filter.scope-header to a header that a trusted gateway"
        + " sets, or define a ScopeResolver bean";

    /** The 401 detail: how this application's idempotent requests get a scope. */
    static String unauthenticatedDetail(boolean ownResolver, String header) {
      if (ownResolver) {
        return "idempotent requests need a scope, and this application's ScopeResolver found none for this request:"
            + " keys belong to the caller's scope";
      }
      if (header != null && !header.isBlank()) {
        return "idempotent requests need a scope, taken here from the " + header.trim() + " header"
            + " (idem.filter.scope-header), which this request does not carry";
      }
      return NO_PRINCIPAL;
    }

    @Bean
    FilterRegistrationBean<jakarta.servlet.Filter> idempotencyFilter(ObjectProvider<Idem> idems,
        IdemProperties properties, ScopeResolver scopes, ObjectProvider<TransactionBoundary> boundary,
        ObjectProvider<PlatformTransactionManager> transactions, ListableBeanFactory beans,
        org.springframework.core.env.Environment environment) {
      Idem idem = idems.getIfAvailable();
      List<AnnotatedRoutes.Entry> routes = AnnotatedRoutes.scan(beans, defaults(properties));
      FilterRegistrationBean<jakarta.servlet.Filter> registration = new FilterRegistrationBean<>();
      if (idem == null) {
        if (!routes.isEmpty()) {
          throw new IllegalStateException("@Idempotent methods exist but no Idem could be configured: it needs one"
              + " DataSource (or a @Primary one), one IdempotencyStore bean of the application's own (or a @Primary"
              + " one), or an Idem bean");
        }
        registration.setFilter((request, response, chain) -> chain.doFilter(request, response));
        registration.setEnabled(false);
        return registration;
      }
      registration.setName("idempotencyFilter");
      registration.setOrder(properties.getFilter().getOrder());
      registration.setDispatcherTypes(DispatcherType.REQUEST);
      registration.addUrlPatterns("/*");
      if (routes.isEmpty()) {
        LOG.log(System.Logger.Level.INFO, "Idem '" + idem.name() + "': no @Idempotent handler methods; the"
            + " idempotency filter is not registered");
        registration.setFilter((request, response, chain) -> chain.doFilter(request, response));
        registration.setEnabled(false);
        return registration;
      }
      IdemProperties.Filter f = properties.getFilter();
      boolean ownResolver = !(beans.containsBean("idemScopeResolver") && beans.getBean("idemScopeResolver") == scopes);
      String header = f.getScopeHeader();
      String unauthenticated = unauthenticatedDetail(ownResolver, header);
      if (!ownResolver && (header == null || header.isBlank())) {
        boolean security = ClassUtils.isPresent("org.springframework.security.core.Authentication",
            Web.class.getClassLoader());
        LOG.log(security ? System.Logger.Level.INFO : System.Logger.Level.WARNING, "Idem '" + idem.name() + "':"
            + " @Idempotent requests are scoped by the authenticated principal"
            + (security ? "" : ", and Spring Security is not on the classpath") + "; a request without one is"
            + " answered 401 AUTH.unauthenticated. To choose otherwise, set idem.filter.scope-header to a header that a"
            + " trusted gateway sets, or define a ScopeResolver bean");
      }
      TransactionBoundary own = boundary.getIfAvailable();
      TransactionBoundary chosen = own != null ? own : springBoundary(idem, transactions);
      // Without the look-up, a duplicate first attempt runs the handler and relies on the rollback; that holds only
      // when the handler's writes are in the record's transaction: the application's own boundary, or Spring's joined
      boolean joined = own != null || chosen instanceof SpringTransactionBoundary;
      if (f.isFirstAttemptSkipsLookup() && !joined) {
        LOG.log(System.Logger.Level.INFO, "Idem '" + idem.name() + "': idem.filter.first-attempt-skips-lookup is"
            + " off for atomic routes: they do not join a Spring transaction on the store's DataSource, so every"
            + " request reads its record before the work (phased routes keep it)");
      }
      IdempotencyFilter.Builder builder = IdempotencyFilter.builder(idem).scope(scopes)
          .unauthenticatedDetail(unauthenticated).keepOnlyStartedHandlers(true)
          .transactionBoundary(chosen)
          .maxRequestBytes(f.getMaxRequestBytes()).mismatchStatus(f.getMismatchStatus())
          .firstAttemptSkipsLookup(f.isFirstAttemptSkipsLookup() && joined, f.isFirstAttemptSkipsLookup())
          .keepHeaders(f.getKeepHeaders().toArray(String[]::new))
          .pathPrefix(environment.getProperty("spring.mvc.servlet.path", ""));
      String link = f.getRecordLink();
      if (link != null && !link.isBlank()) {
        builder.recordLink(key -> recordLink(link, key));
      }
      routes.forEach(r -> builder.route(r.route()));
      registration.setFilter(builder.build());
      LOG.log(System.Logger.Level.INFO, "Idem '" + idem.name() + "': idempotent routes " + routes.stream()
          .map(r -> r.route().toString()).collect(Collectors.joining(", ")));
      return registration;
    }

    /** {@code template} with the record's scope, operation and key, URL-encoded, in place of their names. */
    static String recordLink(String template, RecordKey key) {
      return template.replace("{scope}", URLEncoder.encode(key.scope().value(), StandardCharsets.UTF_8))
          .replace("{operation}", URLEncoder.encode(key.operation().name(), StandardCharsets.UTF_8))
          .replace("{key}", URLEncoder.encode(key.key().value(), StandardCharsets.UTF_8));
    }

    /**
     * Atomic routes join Spring's transaction when the store is the JDBC store and the single transaction manager
     * manages the store's own DataSource (a DataSourceTransactionManager of it, or a JpaTransactionManager that
     * exposes it); otherwise the store's own transaction is the only one.
     */
    private static TransactionBoundary springBoundary(Idem idem, ObjectProvider<PlatformTransactionManager> tm) {
      PlatformTransactionManager transactions = tm.getIfUnique();
      IdempotencyStore underneath = idem.store() instanceof EncryptedIdempotencyStore
          ? ((EncryptedIdempotencyStore) idem.store()).unwrap() : idem.store();
      if (transactions != null && underneath instanceof JdbcIdempotencyStore) {
        JdbcIdempotencyStore store = (JdbcIdempotencyStore) underneath;
        // a DataSourceTransactionManager's resource, or the DataSource a JpaTransactionManager exposes
        if (SpringDataSourceTransactions.dataSourceOf(transactions) == store.dataSource()) {
          return new SpringTransactionBoundary(transactions, store.dataSource(), store);
        }
      }
      LOG.log(System.Logger.Level.INFO, "Idem '" + idem.name() + "': no transaction manager manages the"
          + " JDBC store's DataSource; atomic routes use the store's own transaction"
          + " (IdempotentExchange.transaction())");
      return TransactionBoundary.none();
    }
  }
}
