#!/usr/bin/env python3
"""discovery_engine_report.py TSV: the report of bench/discovery_engine.sh.

Reads the rows that discovery_engine.sh wrote (one per timed step) and
prints, per corpus: the load, sketching and VACUUM; for each call (step,
path, workers) the median seconds over the rounds, the answer and its
checksums, the temporary files and the peaks; then the ratios of medians
(each path to sql, the engine's workers 2 to 0, clusters to pairs) and
sketch + vacuum + pairs per path.  Figures only: the targets of issue 39
are printed beside them for reading, nothing is checked.
"""

import csv
import statistics
import sys
from collections import OrderedDict

TARGETS = ("targets of issue 39, for reading: at 1M, sketch + pairs <= 20 s; peak temp <= 2x the "
           "sketch table; engine workers 2/0 <= 0.6; clusters/pairs <= 1.1")


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v, spec="%.1f"):
    return "n/a" if v is None else spec % v


def median(rows, field="seconds"):
    vals = [num(r[field]) for r in rows if r["status"] == "ok" and num(r[field]) is not None]
    return statistics.median(vals) if vals else None


def peak(rows, field):
    vals = [num(r[field]) for r in rows if num(r[field]) is not None]
    return max(vals) if vals else None


def one_step(rows, step):
    found = [r for r in rows if r["step"] == step]
    return found[0] if found else None


def print_setup(rows):
    load, sketch, vacuum = (one_step(rows, s) for s in ("load", "sketch", "vacuum"))
    if load is not None and load["status"] == "ok":
        print("  %s documents, %s bytes a document on average" % (load["n1"], load["n2"]))
    for r in (load, sketch, vacuum):
        if r is None:
            continue
        print("  %-7s %7s s  cpu %s s, backend peak %s MB (anon %s, shmem %s), workers anon %s MB, peak temp %s MB, "
              "load %s%s" % (r["step"], fmt(num(r["seconds"])), r["cpu_s"], r["backend_peak_mb"], r["backend_anon_mb"],
                             r["backend_shmem_mb"], r["workers_anon_mb"], r["peak_temp_mb"], r["load"],
                             "" if r["status"] == "ok" else "  " + r["status"]))
    size = num(sketch["n2"]) if sketch is not None and sketch["status"] == "ok" else None
    if size is not None:
        print("  sketch table: %.0f MB" % (size / 1048576))
    return size, sketch, vacuum


def print_calls(calls, table_mb):
    print("  %-8s %-7s %2s %9s %17s %6s %-21s %-14s %7s %6s %14s %14s %10s %5s" % (
        "call", "path", "w", "median s", "runs (min-max)", "cpu s", "answer", "checksum", "temp MB", "files",
        "peak temp MB", "backend MB", "workers MB", "load"))
    for (step, path, workers), rows in calls.items():
        ok = [r for r in rows if r["status"] == "ok"]
        if not ok:
            why = sorted({r["status"] for r in rows})
            print("  %-8s %-7s %2s %9s  %s" % (step, path, workers, "n/a", "; ".join(why)))
            continue
        secs = [num(r["seconds"]) for r in ok]
        answers = sorted({r["n1"] if step == "pairs" else "%s rows, %s cl" % (r["n1"], r["n2"]) for r in ok})
        sums = sorted({r["checksum"] for r in ok})
        ptemp = peak(ok, "peak_temp_mb")
        print("  %-8s %-7s %2s %9s %17s %6s %-21s %-14s %7s %6s %14s %14s %10s %5s%s" % (
            step, path, workers, fmt(statistics.median(secs)),
            "%d/%d (%.1f-%.1f)" % (len(ok), len(rows), min(secs), max(secs)), fmt(median(ok, "cpu_s")),
            " | ".join(answers), " | ".join(sums), fmt(median(ok, "temp_written_mb"), "%.0f"),
            fmt(median(ok, "temp_files"), "%.0f"),
            "%s (%sx)" % (fmt(ptemp, "%.0f"), fmt(ptemp / table_mb if ptemp is not None and table_mb else None,
                                                  "%.2f")),
            "%s (%s+%s)" % (fmt(peak(ok, "backend_peak_mb"), "%.0f"), fmt(peak(ok, "backend_anon_mb"), "%.0f"),
                            fmt(peak(ok, "backend_shmem_mb"), "%.0f")),
            fmt(peak(ok, "workers_anon_mb"), "%.0f"), fmt(median(ok, "load"), "%.2f"),
            "" if len(ok) == len(rows) else "  (" + "; ".join(sorted({r["status"] for r in rows
                                                                       if r["status"] != "ok"})) + ")"))


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def print_ratios(calls, sketch, vacuum):
    med = {k: median(rows) for k, rows in calls.items()}
    cpu = {k: median(rows, "cpu_s") for k, rows in calls.items()}
    paths = OrderedDict((k[1], None) for k in calls)
    lines = []
    for p in paths:
        if p != "sql" and ("pairs", "sql", "2") in med:
            lines.append("pairs %s/sql (2 workers) %s" % (p, fmt(ratio(med.get(("pairs", p, "2")),
                                                                       med[("pairs", "sql", "2")]), "%.2f")))
    if ("pairs", "engine", "0") in med and ("pairs", "engine", "2") in med:
        lines.append("engine workers 2/0 %s" % fmt(ratio(med[("pairs", "engine", "2")],
                                                         med[("pairs", "engine", "0")]), "%.2f"))
    for p in paths:
        if ("clusters", p, "2") in med:
            lines.append("clusters/pairs %s %s" % (p, fmt(ratio(med[("clusters", p, "2")],
                                                                med.get(("pairs", p, "2"))), "%.2f")))
    if lines:
        print("  ratios of medians: " + "; ".join(lines))
    if ("pairs", "sql", "2") in cpu:
        cpu_lines = ["pairs %s/sql (2 workers) %s" % (p, fmt(ratio(cpu.get(("pairs", p, "2")),
                                                                   cpu[("pairs", "sql", "2")]), "%.2f"))
                     for p in paths if p != "sql"]
        if cpu_lines:
            print("  ratios of median CPU seconds: " + "; ".join(cpu_lines))
    base = None
    if sketch is not None and vacuum is not None and sketch["status"] == vacuum["status"] == "ok":
        base = num(sketch["seconds"]) + num(vacuum["seconds"])
    totals = ["%s w%s %s" % (p, w, fmt(None if base is None or m is None else base + m, "%.1f s"))
              for (step, p, w), m in med.items() if step == "pairs"]
    print("  sketch + vacuum + pairs: " + "; ".join(totals))
    for step in ("pairs", "clusters"):
        sums = {r["checksum"] for k, rows in calls.items() if k[0] == step
                for r in rows if r["status"] == "ok"}
        if len(sums) > 1:
            print("  %s: the answers differ (%d checksums)" % (step, len(sums)))
        elif sums:
            print("  %s: every run of every path gave the same answer" % step)


def main():
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    corpora = OrderedDict()
    for r in rows:
        corpora.setdefault(r["corpus"], []).append(r)
    print("cpu s: CPU time of the backend and its parallel workers, median; "
          "backend MB: peak of RssAnon + RssShmem of the client backend (anon+shmem: the peak of each); "
          "workers MB: peak of the parallel workers' RssAnon summed; peak temp: temporary files and "
          "temporary tables on disk at once (x the sketch table); temp MB, files: written "
          "(pg_stat_database), median; load: 1-minute load average before the call, median")
    print(TARGETS)
    for corpus, crows in corpora.items():
        print()
        print("corpus %s" % corpus)
        size, sketch, vacuum = print_setup(crows)
        calls = OrderedDict()
        for r in crows:
            if r["step"] in ("pairs", "clusters"):
                calls.setdefault((r["step"], r["path"], r["workers"]), []).append(r)
        if not calls:
            continue
        print_calls(calls, size / 1048576 if size else None)
        print_ratios(calls, sketch, vacuum)


if __name__ == "__main__":
    main()
