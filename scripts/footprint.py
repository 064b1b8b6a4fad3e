#!/usr/bin/python3
"""How much memory one policy decision touches when it finds the caches cold.

In the daemon the module's decisions run between a client's messages and the graph's
cycles, which leave little of the module in the caches: a decision's cost there is set far
more by the cache lines and pages it has to fetch than by the instructions it runs (the
policy benchmark's decision takes about 1.5 us back to back, the daemon's profile shows it
several times slower). This counts those lines, with no clock involved, so that the count
is the same on a busy machine as on an idle one.

It runs session-policy-bench under Valgrind's cache simulator (cachegrind), deciding
through the module core's C entry points as the module does (`--entry-points`: a stream's
properties handed over as the daemon's C property set, a client's change followed by the
flush of the module's next loop turn), with a buffer twice the simulated last-level cache
written between two decisions (`--cold`), so that every decision starts with nothing of
its own cached. Each workload runs twice, with 200 and 400 rounds, and the difference
is divided by the 400 decisions the longer run made more: what starting the program costs
(loading, building the graph) cancels out.

The counts are the same from one run to the next and do not depend on the machine's load:
the module core runs on a simulated clock there (5 ms between two decisions, as in the
daemon's pause/resume benchmark), so its publishing interval writes the same publications at
the same decisions in every run.

Reported per decision: instructions, cold code lines (64-byte lines of instructions missed
in the last-level cache), cold data lines read and written, and the functions that fetch
the most lines. The figures are an upper bound of what a decision fetches in the daemon,
where some lines stay cached from one event to the next.

With `--pages`, also the 4 KiB pages of code and of data a decision touches (the same runs
once more, the simulated cache's lines made 4 KiB long): on a virtual machine a page the
TLB no longer holds costs a walk of two sets of page tables, and the same lines can lie on
few pages or on many.

The daemon runs the module as meson-shim/lay-out-module.sh laid it out (llvm-bolt, from a
profile of the same benchmark's decisions: the blocks a decision runs together, the rest
moved away). When llvm-bolt is installed the benchmark is laid out the same way before it
is measured, so that the lines counted are those of the code the daemon runs; `--layout off`
measures the benchmark as linked.

Usage: scripts/footprint.py [--bench PATH] [--workload NAME]... [--sessions N] [--layout auto|on|off]
                            [--pages] [--json FILE]
Needs valgrind (Debian package `valgrind`) and a release build of session-policy-bench
(`swift build -c release --product session-policy-bench`); for the layout, llvm-bolt
(Debian package `bolt-19`).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

LL_BYTES = 8 * 1024 * 1024
EVICT_BYTES = 2 * LL_BYTES
SHORT, LONG = 200, 400
EVENTS = ["Ir", "ILmr", "DLmr", "DLmw"]
PAGE_BYTES = 4096


def usable_bolt():
    """llvm-bolt 17 or later, as meson asks for (an older one cannot lay out only the
    functions the profile saw), or None."""
    for name in ("llvm-bolt-19", "llvm-bolt"):
        path = shutil.which(name)
        if path is None:
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        words = out.split()
        for i, word in enumerate(words[:-1]):
            if word == "version":
                major = words[i + 1].split(".")[0]
                if major.isdigit() and int(major) >= 17:
                    return path
    return None


def read_cachegrind(path):
    """{function: [counts in the file's event order]}, and the event names."""
    events, totals, fn = None, {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("fn="):
                fn = line[3:].strip()
            elif fn is not None and line[:1].isdigit():
                values = [int(x) for x in line.split()[1:]]
                row = totals.setdefault(fn, [0] * len(events))
                for i, v in enumerate(values):
                    row[i] += v
    if events is None:
        raise RuntimeError(f"{path} is not a cachegrind output file")
    return events, totals


def run_cachegrind(bench, workload, sessions, rounds, out, line=64):
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", f"--LL={LL_BYTES},16,{line}",
           f"--cachegrind-out-file={out}", bench, "--workload", workload, "--sessions", str(sessions),
           "--entry-points", "--untimed", "--rounds", str(rounds), "--cold", str(EVICT_BYTES)]
    # Swift seeds its hash tables per process; without a fixed seed the tables' layout, and
    # with it the lines touched, differs a little from one run to the next.
    env = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1")
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        # The benchmark's own message, without Valgrind's lines (`==pid==`, `--pid--`).
        own = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith(("==", "--"))]
        tail = "\n".join(own[-5:] or r.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"session-policy-bench failed under cachegrind (exit {r.returncode}):\n{tail}")


def demangle(names):
    tool = shutil.which("swift-demangle") or shutil.which("swift")
    if tool is None:
        return names
    cmd = [tool, "--simplified"] if tool.endswith("swift-demangle") else [tool, "demangle", "--simplified"]
    r = subprocess.run(cmd, input="\n".join(names), capture_output=True, text=True)
    out = r.stdout.split("\n")
    return out[:len(names)] if r.returncode == 0 and len(out) >= len(names) else names


def per_decision(bench, workload, sessions, scratch, line=64):
    """{function: {event: count per decision}} of the runs with `line`-byte lines."""
    files = []
    for rounds in (SHORT, LONG):
        path = os.path.join(scratch, f"{workload}-{rounds}-{line}.out")
        run_cachegrind(bench, workload, sessions, rounds, path, line)
        files.append(read_cachegrind(path))
    (events, short), (_, long_) = files
    idx = {e: events.index(e) for e in EVENTS}
    decisions = 2 * (LONG - SHORT)

    # The benchmark's own loop writes the eviction buffer: it is not the decision's.
    def measured(fn):
        return "session_policy_bench7measure" not in fn and "evictCaches" not in fn

    per_fn = {}
    for fn, row in long_.items():
        if not measured(fn):
            continue
        before = short.get(fn, [0] * len(events))
        per_fn[fn] = {e: (row[idx[e]] - before[idx[e]]) / decisions for e in EVENTS}
    return per_fn, decisions


def footprint(bench, workload, sessions, scratch, top, pages=False):
    per_fn, decisions = per_decision(bench, workload, sessions, scratch)
    total = {e: sum(v[e] for v in per_fn.values()) for e in EVENTS}
    ranked = sorted(per_fn.items(), key=lambda kv: -(kv[1]["ILmr"] + kv[1]["DLmr"] + kv[1]["DLmw"]))[:top]
    names = demangle([fn for fn, _ in ranked])
    row = {
        "workload": workload, "sessions": sessions, "decisions": decisions,
        "instructions": round(total["Ir"]), "coldCodeLines": round(total["ILmr"]),
        "coldDataLinesRead": round(total["DLmr"]), "coldDataLinesWritten": round(total["DLmw"]),
        "functionsTouched": sum(1 for v in per_fn.values() if v["ILmr"] >= 0.5),
        "top": [{"symbol": name, "coldCodeLines": round(v["ILmr"], 1),
                 "coldDataLines": round(v["DLmr"] + v["DLmw"], 1)} for name, (_, v) in zip(names, ranked)],
    }
    if pages:
        # A page missed by one function and touched again by another is counted once: the
        # simulated cache keeps it (it holds 2,048 pages) until the next eviction.
        per_page, _ = per_decision(bench, workload, sessions, scratch, PAGE_BYTES)
        row["codePages"] = round(sum(v["ILmr"] for v in per_page.values()))
        row["dataPages"] = round(sum(v["DLmr"] + v["DLmw"] for v in per_page.values()))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Example: scripts/footprint.py --workload toggle --sessions 100",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=".build/release/session-policy-bench",
                    help="the session-policy-bench binary (a release build)")
    ap.add_argument("--workload", action="append",
                    help="a session-policy-bench workload; repeat for more (default: toggle and churn)")
    ap.add_argument("--sessions", type=int, default=10, choices=[10, 100, 1000, 10000],
                    help="sessions besides the measured one (default 10)")
    ap.add_argument("--top", type=int, default=8, help="functions listed per workload (default 8)")
    ap.add_argument("--layout", choices=["auto", "on", "off"], default="auto",
                    help="lay the benchmark out as the module is before measuring it: auto (the default) "
                         "when llvm-bolt is installed")
    ap.add_argument("--pages", action="store_true",
                    help="also count the 4 KiB pages of code and data a decision touches (runs the "
                         "workloads once more)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()

    if shutil.which("valgrind") is None:
        sys.exit("footprint: valgrind is not installed (Debian: apt-get install valgrind)")
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"footprint: no session-policy-bench at {args.bench} "
                 "(build it with: swift build -c release --product session-policy-bench)")
    workloads = args.workload or ["toggle", "churn"]
    version = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    bolt = usable_bolt()
    if args.layout == "on" and bolt is None:
        sys.exit("footprint: --layout on needs llvm-bolt 17 or later (Debian: apt-get install bolt-19)")
    laid_out = args.layout != "off" and bolt is not None
    rows = []
    with tempfile.TemporaryDirectory(prefix="footprint.") as scratch:
        bench = args.bench
        if laid_out:
            print("footprint: laying the benchmark out as the module is (llvm-bolt)…", file=sys.stderr, flush=True)
            bench = os.path.join(scratch, "session-policy-bench")
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "meson-shim", "lay-out-module.sh")
            r = subprocess.run([script, bolt, args.bench, args.bench, bench, os.path.join(scratch, "profile")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.exit(f"footprint: {r.stderr.strip()}")
        for w in workloads:
            print(f"footprint: {w} ({args.sessions} sessions) under cachegrind…", file=sys.stderr, flush=True)
            try:
                rows.append(footprint(bench, w, args.sessions, scratch, args.top, args.pages))
            except RuntimeError as e:
                sys.exit(f"footprint: {e}")
    print("laid out as the module is (llvm-bolt)" if laid_out else "as linked (not laid out)")
    for r in rows:
        print(f"{r['workload']}: {r['instructions']:,} instructions, {r['coldCodeLines']} cold code lines, "
              f"{r['coldDataLinesRead']} cold data lines read and {r['coldDataLinesWritten']} written per decision "
              f"({r['functionsTouched']} functions)")
        if "codePages" in r:
            print(f"    on {r['codePages']} pages of code and {r['dataPages']} of data (4 KiB)")
        for t in r["top"]:
            print(f"    {t['coldCodeLines']:6.1f} code {t['coldDataLines']:6.1f} data  {t['symbol'][:100]}")
    if args.json:
        doc = {"valgrind": version, "lastLevelCacheBytes": LL_BYTES, "evictionBytes": EVICT_BYTES,
               "bench": os.path.abspath(args.bench), "laidOut": laid_out, "workloads": rows}
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
