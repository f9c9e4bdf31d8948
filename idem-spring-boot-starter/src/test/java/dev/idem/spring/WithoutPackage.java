package dev.idem.spring;

/**
 * The tests' class loader, as if the classes of a package were not on the classpath: an application started with
 * it ({@code new DefaultResourceLoader(new WithoutPackage("tools.jackson."))}) sees no class whose name starts with
 * the prefix, so the starter's conditions and checks run as they would without that dependency.
 */
public final class WithoutPackage extends ClassLoader {
  private final String hidden;

  /** Hides the classes whose names start with {@code hidden}, such as {@code "dev.idem.outbox."}. */
  public WithoutPackage(String hidden) {
    super(WithoutPackage.class.getClassLoader());
    this.hidden = hidden;
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (name.startsWith(hidden)) {
      throw new ClassNotFoundException(name);
    }
    return super.loadClass(name, resolve);
  }
}
