#!/usr/bin/env python3
"""The table of payments-http-filters.sh: per configuration, median req/s of each scenario and the median of the
per-pass idem-first/baseline and idem-replay/baseline ratios, over every round's JSON report (NAME-ROUND.json in
DIR); each configuration's difference to the reference configuration is the switched filter's cost.

  idem-bench/scripts/payments-http-filters.py [--reference all-on] DIR
"""
import argparse
import collections
import glob
import json
import os
import statistics


def per_pass(report):
    """{scenario: [throughput per pass]} of one report, passes in their order."""
    return {s["name"]: [p["throughput"] for p in s["passes"]] for s in report["scenarios"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--reference", default="all-on")
    args = parser.parse_args()
    rates = collections.defaultdict(lambda: collections.defaultdict(list))
    ratios = collections.defaultdict(lambda: collections.defaultdict(list))
    errors = collections.Counter()
    order = []
    for path in sorted(glob.glob(os.path.join(args.dir, "*.json")), key=os.path.getmtime):
        name = os.path.basename(path)[:-len(".json")].rsplit("-", 1)[0]
        if name not in order:
            order.append(name)
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        errors[name] += sum(s["errors"] for s in report["scenarios"])
        passes = per_pass(report)
        for scenario, values in passes.items():
            rates[name][scenario].extend(values)
        for scenario in ("idem-first", "idem-replay"):
            if scenario in passes and "baseline" in passes:
                ratios[name][scenario].extend(a / b for a, b in zip(passes[scenario], passes["baseline"]) if b)
    if not order:
        raise SystemExit("no reports (*.json) in " + args.dir)

    def median(values):
        return statistics.median(values) if values else float("nan")

    ref = args.reference
    print("| configuration | passes | baseline req/s | idem-first req/s | idem-replay req/s | first/baseline"
          " | replay/baseline | first/baseline vs " + ref + " | errors |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in order:
        first = median(ratios[name]["idem-first"])
        diff = first - median(ratios[ref]["idem-first"]) if ref in ratios else float("nan")
        print(f"| {name} | {len(rates[name]['baseline'])} | {median(rates[name]['baseline']):.1f}"
              f" | {median(rates[name]['idem-first']):.1f} | {median(rates[name]['idem-replay']):.1f}"
              f" | {first:.3f} | {median(ratios[name]['idem-replay']):.3f} | {diff:+.3f} | {errors[name]} |")
    print("\nPer-pass idem-first/baseline ratios (spread = noise):")
    for name in order:
        print(f"- {name}: " + ", ".join(f"{r:.2f}" for r in ratios[name]["idem-first"]))


if __name__ == "__main__":
    main()
