package dev.idem.spring.method;

import dev.idem.spring.method.app.ShopApp;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The child of {@link MethodCrashContract}: starts the shop on the database its arguments name and calls its
 * {@code @Idempotent} crash method, which stops at the crash point to be killed. Arguments: key, crash point, then the
 * application's arguments.
 */
public final class MethodCrashChild {
  private MethodCrashChild() {}

  public static void main(String[] args) {
    try {
      String[] app = new String[args.length - 2];
      System.arraycopy(args, 2, app, 0, app.length);
      ConfigurableApplicationContext context = new SpringApplicationBuilder(ShopApp.class)
          .web(WebApplicationType.NONE).run(app);
      try (Connection c = context.getBean(DataSource.class).getConnection()) {
        context.getBean(JdbcTemplate.class).execute(ShopApp.effectTable(c.getMetaData().getDatabaseProductName()));
      }
      context.getBean(ShopApp.Shop.class).crash(args[0], args[1]);
      System.err.println("child returned without reaching its crash point");
    } catch (Throwable t) {
      t.printStackTrace();
    }
    System.err.flush();
    Runtime.getRuntime().halt(1);
  }
}
