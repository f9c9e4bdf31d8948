#!/usr/bin/env python3
"""CPU samples of a servlet service, attributed to each filter of its chain (the reference service's profile).

Reads a JFR recording (or the text of `jfr print --stack-depth 256 --events jdk.ExecutionSample`) and, for every
sample taken inside Tomcat's request processing, names the component whose own code was running: split the stack at
the ApplicationFilterChain.doFilter frames; the frames above the innermost one belong to the filter (or servlet) that
chain frame called, named by the first frame of that segment that is not a generic base class (OncePerRequestFilter,
HttpFilter, GenericFilterBean). A filter's row is thus its doFilter frame minus everything below the next filter or
the servlet. Samples below the outermost chain frame are Tomcat's (connector, valves, HTTP parsing); the servlet's
are Spring MVC plus the application, one row per controller (the service also serves its provider's webhooks while
the load runs). Shares are of the samples in request processing; "in Idem code" counts the
samples whose innermost dev.idem.* frame is the layer's, not dev.idem.examples' (the layer's work, its JDBC calls
included, wherever it runs: the phased operation's record writes happen inside the handler). Record with
-XX:FlightRecorderOptions=stackdepth=256: JFR keeps 64 frames by default, too few for Spring MVC under 12 filters.

  idem-bench/scripts/jfr-filter-profile.py RECORDING.jfr [--depth 256] [--thread-prefix http-nio-]
      [--breakdown dev.idem.servlet.IdempotencyFilter]

--breakdown splits one component's own samples by the leaf frame's package (JDBC driver, pool, codec, ...).
A stack truncated before the outermost chain frame still counts for its innermost segment; truncated stacks are
counted and reported (raise --depth if there are many).
"""
import argparse
import collections
import subprocess
import sys

CHAIN = "org.apache.catalina.core.ApplicationFilterChain.doFilter("
GENERIC = ("org.springframework.web.filter.OncePerRequestFilter.", "jakarta.servlet.http.HttpFilter.",
           "org.springframework.web.filter.GenericFilterBean.", "jakarta.servlet.GenericFilter.")
SERVLET = ("jakarta.servlet.http.HttpServlet.", "org.springframework.web.servlet.")
TOMCAT = "org.apache.coyote."
ENTRY = ("doFilter", "doFilterInternal")
LAYER = "dev.idem."
NOT_LAYER = "dev.idem.examples."
APPLICATION = NOT_LAYER


def samples(text, prefix):
    """Yields (stack top-first, truncated) for each execution sample of a thread whose name starts with prefix."""
    stack, thread, inside = [], "", False
    truncated = False
    for line in text.splitlines():
        s = line.strip()
        if s == "jdk.ExecutionSample {":
            stack, thread, truncated, inside = [], "", False, False
        elif s.startswith("sampledThread = "):
            thread = s[len("sampledThread = "):].strip('"').split('"')[0]
        elif s == "stackTrace = [":
            inside = True
        elif inside and s == "]":
            inside = False
            if thread.startswith(prefix):
                yield stack, truncated
        elif inside and s == "...":
            truncated = True
        elif inside and s:
            stack.append(s.split(" line:")[0])


def method_class(frame):
    name = frame.split("(")[0]
    return name.rsplit(".", 1)[0]


def handler(segment):
    """The servlet's row: named after the application's controller on the stack, when there is one."""
    controller = next((f for f in segment if f.startswith(APPLICATION) and "Controller" in method_class(f)), None)
    if controller is None:
        return "servlet (Spring MVC, no application controller)"
    return "servlet: " + method_class(controller).rsplit(".", 1)[-1].split("$$")[0]


def component(segment):
    """Names the filter or servlet a segment (top-first frames above a chain frame) belongs to: the chain's own
    helpers (request wrappers, method handles) when the frame it called is no filter or servlet entry point."""
    for frame in reversed(segment):
        if frame.startswith(GENERIC):
            continue
        if frame.startswith(SERVLET):
            return handler(segment)
        method = frame.split("(")[0].rsplit(".", 1)[-1]
        return method_class(frame) if method in ENTRY else "(chain)"
    return "(chain)"


def attribute(stack, truncated):
    """(component whose own code ran, whether that code was inside Idem's), or (None, False) outside requests."""
    chains = [i for i, f in enumerate(stack) if f.startswith(CHAIN)]
    if not chains:
        if any(f.startswith(TOMCAT) for f in stack):
            return "tomcat (connector, valves)", False
        return ("(truncated stack, no chain frame)" if truncated else None), False
    innermost = chains[0]
    if innermost == 0:
        return "(chain)", False
    segment = stack[:innermost]
    owner = next((f for f in segment if f.startswith(LAYER)), "")
    return component(segment), not owner.startswith(NOT_LAYER) and owner != ""


def leaf_package(stack):
    frame = stack[0] if stack else "?"
    parts = method_class(frame).split(".")
    return ".".join(parts[:3]) if len(parts) > 3 else ".".join(parts[:-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording", help="a .jfr file, or the text of jfr print")
    parser.add_argument("--depth", type=int, default=256)
    parser.add_argument("--thread-prefix", default="http-nio-")
    parser.add_argument("--breakdown", action="append", default=[])
    args = parser.parse_args()
    if args.recording.endswith(".jfr"):
        text = subprocess.run(["jfr", "print", "--stack-depth", str(args.depth), "--events", "jdk.ExecutionSample",
                               args.recording], check=True, capture_output=True, text=True).stdout
    else:
        with open(args.recording, encoding="utf-8") as f:
            text = f.read()
    counts = collections.Counter()
    in_layer = collections.Counter()
    packages = {name: collections.Counter() for name in args.breakdown}
    total = truncated = outside = 0
    for stack, cut in samples(text, args.thread_prefix):
        name, layer = attribute(stack, cut)
        if name is None:
            outside += 1
            continue
        total += 1
        truncated += cut
        counts[name] += 1
        in_layer[name] += layer
        if name in packages:
            packages[name][leaf_package(stack)] += 1
    if total == 0:
        sys.exit("no samples in request processing (threads named " + args.thread_prefix + "*)")
    print("| component (own code) | samples | share of request CPU | of which in Idem code |")
    print("| --- | ---: | ---: | ---: |")
    for name, n in counts.most_common():
        print(f"| {name} | {n} | {100.0 * n / total:.1f} % | {100.0 * in_layer[name] / total:.1f} % |")
    print(f"\n{total} samples in request processing ({truncated} with a truncated stack); {outside} other samples on"
          f" {args.thread_prefix}* threads.")
    for name, by_package in packages.items():
        own = sum(by_package.values())
        print(f"\n{name}: {own} own samples by leaf package")
        print("\n| leaf package | samples | share of the component |")
        print("| --- | ---: | ---: |")
        for package, n in by_package.most_common(12):
            print(f"| {package} | {n} | {100.0 * n / max(own, 1):.1f} % |")


if __name__ == "__main__":
    main()
