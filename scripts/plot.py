#!/usr/bin/python3
"""make bench, last step: bench-out/results.json (audio-session-bench) and
bench-out/policy.json (session-policy-bench --json) -> docs/bench/*.png,
BENCHMARKS.md and the Benchmarks section of README.md.

Usage: scripts/plot.py [--results bench-out/results.json] [--policy bench-out/policy.json]
                       [--footprint bench-out/footprint.json] [--out docs/bench] [--markdown BENCHMARKS.md] [--readme README.md]
                       [--wall SECONDS]
Needs matplotlib (Debian: python3-matplotlib).
"""
import bench_generations
import argparse
import json
import math
import os
import re
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"module": "#1f77b4", "baseline": "#d62728"}
LABELS = {"module": "with the module", "baseline": "stock WirePlumber (--no-module)"}


def num(v):
    """A JSON number, or None (the Swift side writes non-finite values as strings)."""
    if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
        return v
    return None


def f(v, digits=1, unit=""):
    v = num(v)
    if v is None:
        return "—"
    if abs(v) >= 1000 and digits <= 1:
        s = f"{v:,.0f}"
    else:
        s = f"{v:.{digits}f}"
    return s + unit


def spread(st, digits=1, unit=""):
    """median (p10–p90) of a Stats object."""
    if not st or not st.get("n"):
        return "—"
    return f"{f(st.get('median'), digits)} ({f(st.get('p10'), digits)}–{f(st.get('p90'), digits)}){unit}"


def footer(fig, res):
    m = res["machine"]
    text = (f"{m['cpuModel']}, {m['nproc']} cores ({m['arch']}), {m['date'][:10]}; "
            f"PipeWire 0.3.65 + WirePlumber 0.4.13 sandbox; reproduce: {m['command']}")
    fig.text(0.01, 0.005, text, fontsize=7, color="#555555", ha="left", va="bottom")


def systems(res):
    return {s["system"]: s for s in res["systems"]}


def floats(v):
    """A list of JSON numbers, non-numbers (the Swift side writes NaN as "nan") as NaN."""
    return [float(x) if num(x) is not None else float("nan") for x in v]


def series(ax, env, system, label=None):
    if not env:
        return
    env = {k: floats(env[k]) for k in ("tMs", "median", "p10", "p90")}
    t = env["tMs"]
    ax.fill_between(t, env["p10"], env["p90"], color=COLORS[system], alpha=0.2, linewidth=0)
    ax.plot(t, env["median"], color=COLORS[system], label=label or LABELS[system], linewidth=1.6)


# ---------------------------------------------------------------- figures

def plot_headphones(res, out):
    sy = systems(res)
    clients = ["pw-play", "paplay", "aplay"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True)
    for ax, client in zip(axes, clients):
        for name in ("baseline", "module"):
            c = next((c for c in (sy.get(name, {}).get("headphoneLoss") or []) if c["client"] == client), None)
            if not c or not c.get("envelope"):
                continue
            n = len(c["leakedSamples"])
            series(ax, c["envelope"], name, f"{LABELS[name]} ({n} trials)")
        ax.axvline(0, color="black", linestyle="--", linewidth=0.8)
        ax.text(2, -8, "headphones\nremoved", fontsize=8, va="top")
        ax.set_title(client)
        ax.set_xlabel("time from the unplug (ms)")
        ax.set_ylim(-105, 0)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("speaker level, RMS per 256 frames (dBFS)\n(silence drawn at -100)")
    axes[0].legend(loc="center left", fontsize=8)
    fig.suptitle("Headphone loss: what reaches the speaker (median, band p10–p90 over trials)")
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    footer(fig, res)
    path = os.path.join(out, "headphone-loss.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_envelope(res, out, key, title, fname, label_other, duck_line):
    sy = systems(res)
    fig, ax = plt.subplots(figsize=(9, 4.2))
    for name in ("baseline", "module"):
        r = (sy.get(name) or {}).get(key)
        if r and r.get("envelope"):
            n = len([t for t in r["trials"] if t.get("ok")])
            series(ax, r["envelope"], name, f"{LABELS[name]} ({n} trials)")
    ax.axvspan(0, 1000, color="#999999", alpha=0.12, label=label_other)
    if duck_line is not None:
        ax.axhline(duck_line, color="#2ca02c", linestyle=":", linewidth=1.2, label=f"duck level ({duck_line:.1f} dB)")
    ax.set_xlabel("time from the first sample of the " + ("prompt" if key == "duck" else "call") + " (ms)")
    ax.set_ylabel("music level relative to before (dB)\nGoertzel, 256-frame windows")
    ax.set_ylim(-100 if key == "interrupt" else -25, 5)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    footer(fig, res)
    path = os.path.join(out, fname)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_policy(policy, res, out):
    if not policy:
        return None
    fig, ax = plt.subplots(figsize=(9, 4.8))
    workloads = []
    for row in policy:
        if row["workload"] not in workloads:
            workloads.append(row["workload"])
    cmap = plt.get_cmap("tab10")
    for i, w in enumerate(workloads):
        rows = sorted((r for r in policy if r["workload"] == w), key=lambda r: r["sessions"])
        x = [r["sessions"] for r in rows]
        ax.plot(x, [r["median_ns"] / 1000 for r in rows], "o-", color=cmap(i), label=f"{w} p50")
        ax.plot(x, [r["p99_ns"] / 1000 for r in rows], "s--", color=cmap(i), alpha=0.6, label=f"{w} p99")
    ax.axhline(10, color="#2ca02c", linestyle=":", label="target: p99 < 10 µs at 1,000 sessions")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sessions")
    ax.set_ylabel("one decision (µs)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Policy core: cost of one decision vs number of sessions")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    footer(fig, res)
    path = os.path.join(out, "policy-core.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_daemon(res, out):
    sy = systems(res)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    names = [n for n in ("baseline", "module") if n in sy]
    # Memory
    ax = axes[0]
    groups = [("idle", lambda s: (s.get("idle") or {}).get("rssKiB")),
              (f"{res['parameters']['streams']} streams", lambda s: (s.get("streams") or {}).get("rssKiB")),
              ("before churn", lambda s: (s.get("churn") or {}).get("rssBeforeKiB")),
              ("after churn", lambda s: (s.get("churn") or {}).get("rssAfterKiB"))]
    width = 0.38
    for j, name in enumerate(names):
        vals = [(g[1](sy[name]) or 0) / 1024 for g in groups]
        xs = [i + (j - 0.5) * width for i in range(len(groups))]
        ax.bar(xs, vals, width, color=COLORS[name], label=LABELS[name])
        for x, v in zip(xs, vals):
            ax.text(x, v, f"{v:.1f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=8)
    ax.set_ylabel("pipewire VmRSS (MiB)")
    ax.set_title("Daemon memory")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.25)
    # CPU
    ax = axes[1]
    groups = [("stream pause/resume", lambda s: (s.get("cpu") or {}).get("cpuMsPerThousand")),
              ("churn (create/destroy)", churn_cpu)]
    for j, name in enumerate(names):
        vals = [g[1](sy[name]) or 0 for g in groups]
        xs = [i + (j - 0.5) * width for i in range(len(groups))]
        ax.bar(xs, vals, width, color=COLORS[name], label=LABELS[name])
        for x, v in zip(xs, vals):
            ax.text(x, v, f"{v:.0f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g[0] for g in groups], fontsize=8)
    ax.set_ylabel("pipewire CPU ms per 1,000 events")
    ax.set_title("Daemon CPU per 1,000 graph events")
    # Notification latency (module)
    ax = axes[2]
    n = (sy.get("module") or {}).get("notify") or {}
    vals = []
    for st in (n.get("beganMs"), n.get("endedMs")):
        vals.append(st or {})
    labels = ["interruption began", "interruption ended"]
    for i, st in enumerate(vals):
        if st.get("n"):
            ax.errorbar([i], [st["median"]], yerr=[[st["median"] - st["p10"]], [st["p90"] - st["median"]]],
                        fmt="o", color=COLORS["module"], capsize=5)
            ax.plot([i], [st["p99"]], "v", color="black")
            ax.text(i + 0.08, st["median"], f"p50 {st['median']:.2f}\np99 {st['p99']:.2f}", fontsize=7, va="center")
    ax.axhline(5, color="#2ca02c", linestyle=":", label="target p99 < 5 ms")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_xlim(-0.5, 1.8)
    ax.set_ylabel("ms (median, p10–p90; ▼ p99)")
    ax.set_title("Notification latency (AudioSession)")
    ax.legend(fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    footer(fig, res)
    path = os.path.join(out, "daemon-cost.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---------------------------------------------------------------- figures
# Each figure that BENCHMARKS.md and the README summary both show is computed once,
# here or (figures of any one system) in bench_generations.

ok_trials = bench_generations.ok_trials
headphone_counts = bench_generations.headphone_counts
leak_medians = bench_generations.leak_medians
duck_reached = bench_generations.duck_reached
largest_duck_step = bench_generations.largest_duck_step
duck_level_error = bench_generations.duck_level_error
call_pause = bench_generations.call_pause
call_resume = bench_generations.call_resume

DUCK_TARGET_MS = 250 + 1024 / 48  # the ramp plus one 1024-sample cycle at 48 kHz


def added_daemon_memory(mod, base):
    """What the module adds to the daemon's memory, the one figure BENCHMARKS.md and the
    README both show: (idle MiB, MiB with the streams or None, what was measured, the
    baseline's idle MiB), or None. RSS without shared buffers where measured: VmRSS also
    counts the streams' shared buffers, whose resident pages differ from run to run."""
    i, ib = mod.get("idle") or {}, base.get("idle") or {}
    s_, sb = mod.get("streams") or {}, base.get("streams") or {}
    for key, measure in (("rssNoShmemKiB", "RSS without shared buffers"), ("rssKiB", "VmRSS")):
        if num(i.get(key)) and num(ib.get(key)):
            idle = (i[key] - ib[key]) / 1024
            streams = (s_[key] - sb[key]) / 1024 if num(s_.get(key)) and num(sb.get(key)) else None
            return idle, streams, measure, ib[key] / 1024
    return None


def churn_cpu(system):
    """The daemon's CPU per 1,000 stream events of the churn: the median of the rounds on
    daemons of their own (churnCost) when measured, else the one churn of section 7."""
    cost = system.get("churnCost") or {}
    if cost.get("ok") and num(cost.get("cpuMsPerThousand")) is not None:
        return cost["cpuMsPerThousand"]
    return (system.get("churn") or {}).get("cpuMsPerThousandStreamEvents")


def paired_ratios(mod_rounds, stock_rounds):
    """Each module round's figure against the stock round that ran next to it (round i of
    both, run one after the other), or None without such pairs."""
    if not mod_rounds or not stock_rounds or len(mod_rounds) != len(stock_rounds):
        return None
    ratios = [a / b for a, b in zip(mod_rounds, stock_rounds) if num(a) is not None and num(b)]
    return ratios if len(ratios) == len(mod_rounds) else None


def paired_ratio(mod_rounds, stock_rounds):
    """The median of the paired rounds' ratios, or None without such pairs."""
    ratios = paired_ratios(mod_rounds, stock_rounds)
    return statistics.median(ratios) if ratios else None


def paired_spread(mod_rounds, stock_rounds):
    """The middle half of the paired rounds' ratios (first and third quartile), or None
    with fewer than four pairs: how far one pair of rounds can stray from the median."""
    ratios = paired_ratios(mod_rounds, stock_rounds)
    if not ratios or len(ratios) < 4:
        return None
    q = statistics.quantiles(ratios, n=4)
    return q[0], q[2]


# The daemon-cost workloads' names, in the report's order: the toggles, the churn, then the
# property floods by mode.
PAUSE_RESUME, CHURN = "stream pause/resume", "stream churn (create/destroy)"
FLOOD_LABELS = (("activation", "activation-request updates"), ("silent", "silent-mode flips"))


def cost_attempts(mod):
    """(label, attempts, the stock figures' spread in each) of the cost sections that ran
    more than once (`calmest` in audio-session-bench), in the order of `cost_workloads`."""
    floods = {f.get("mode"): f for f in mod.get("propertyFloods") or []}
    sections = [(PAUSE_RESUME, mod.get("cpu") or {}), (CHURN, mod.get("churnCost") or {})]
    sections += [(label, floods.get(mode) or {}) for mode, label in FLOOD_LABELS]
    return [(label, r["attempts"], r.get("stockSpreads") or []) for label, r in sections if (r.get("attempts") or 1) > 1]


def cost_workloads(mod, base):
    """Per workload of the daemon-cost comparison: (label, module ms per 1,000, stock ms per
    1,000, module rounds, stock rounds); the rounds are None where they did not alternate."""
    c, cb = mod.get("cpu") or {}, base.get("cpu") or {}
    cc, ccb = mod.get("churnCost") or {}, base.get("churnCost") or {}
    churn_alternated = cc.get("ok") and ccb.get("ok")
    rows = [(PAUSE_RESUME, c.get("cpuMsPerThousand"), cb.get("cpuMsPerThousand"),
             c.get("roundsMsPerThousand"), cb.get("roundsMsPerThousand")),
            (CHURN, churn_cpu(mod), churn_cpu(base),
             cc.get("roundsMsPerThousand") if churn_alternated else None,
             ccb.get("roundsMsPerThousand") if churn_alternated else None)]
    floods = {f["mode"]: f for f in mod.get("propertyFloods") or [] if f.get("ok")}
    bfloods = {f["mode"]: f for f in base.get("propertyFloods") or [] if f.get("ok")}
    for mode, label in FLOOD_LABELS:
        a, b = floods.get(mode) or {}, bfloods.get(mode) or {}
        rows.append((label, a.get("cpuMsPerThousand"), b.get("cpuMsPerThousand"),
                     a.get("roundsMsPerThousand"), b.get("roundsMsPerThousand")))
    return rows


def cost_spreads(mod, base):
    """{label: (first quartile, third quartile)} of the paired rounds' ratios, per workload
    of cost_ratios, where the rounds alternated."""
    spreads = {label: paired_spread(mr, sr) for label, _, _, mr, sr in cost_workloads(mod, base)}
    return {k: v for k, v in spreads.items() if v is not None}


def cost_ratios(mod, base):
    """The module's daemon CPU per event against stock's, per workload: [(label, module ms
    per 1,000, stock ms per 1,000, ratio)], only where both were measured. The ratio is the
    median of the paired rounds' ratios where the rounds alternated (each module round
    against the stock round next to it: the machine's drift between rounds cancels in a
    pair), else the ratio of the two medians."""
    out = []
    pairs = [(label, a, b, paired_ratio(mr, sr)) for label, a, b, mr, sr in cost_workloads(mod, base)]
    for label, a, b, paired in pairs:
        a, b = num(a), num(b)
        if a is not None and b:
            out.append((label, a, b, paired if paired is not None else a / b))
    return out


def loop_stall(system):
    """The largest round trip of the loop probe during the churn (ms), or None."""
    return num((system.get("churn") or {}).get("loopLargestMs"))


def hostile_memory(mod, base):
    """pipewire's RssAnon after the hostile clients, module and stock (MiB), and what was
    read: with WirePlumber and pipewire-pulse gone when measured, else after the last round."""
    fa, fb = mod.get("faults") or {}, base.get("faults") or {}
    if num(fa.get("rssAnonAloneKiB")) and num(fb.get("rssAnonAloneKiB")):
        n = min(len(fa.get("rssAnonAloneEachKiB") or []), len(fb.get("rssAnonAloneEachKiB") or []))
        return (fa["rssAnonAloneKiB"] / 1024, fb["rssAnonAloneKiB"] / 1024, "with WirePlumber and pipewire-pulse gone"
                + (f", the median of {n} daemons per system" if n > 1 else ""))
    a = (fa.get("rssAnonKiB") or [None])[-1]
    b = (fb.get("rssAnonKiB") or [None])[-1]
    if num(a) is None or num(b) is None:
        return None
    return a / 1024, b / 1024, "after the last round"


def idle_wakeups(system):
    """The daemon's wake-ups per minute while idle, or None."""
    return num((system.get("idle") or {}).get("wakeupsPerMinute"))


def notify_latency(system):
    """Stats of every notification's latency (ms), or None when not measured."""
    n = system.get("notify") or {}
    return n["allMs"] if n.get("ok") else None


def slowest_policy_workload(policy):
    """The policy bench's row with the highest p99 at 1,000 sessions (fan-out aside, it is
    linear by specification), and whether every such row is under 10 µs; None if none."""
    rows = [r for r in policy or [] if r["sessions"] == 1000 and r["workload"] != "fan-out"]
    if not rows:
        return None
    return max(rows, key=lambda r: r["p99_ns"]), all(r["p99_ns"] < 10_000 for r in rows)


# ---------------------------------------------------------------- BENCHMARKS.md

def met(ok):
    return "**met**" if ok is True else ("**missed**" if ok is False else "not measured")


def md_header(res, wall):
    m = res["machine"]
    la, lb = m.get("loadAverageStart") or [], m.get("loadAverageEnd") or []
    return [
        "# Benchmarks",
        "",
        "Generated by `make bench` (scripts/bench.sh: `audio-session-bench`, `session-policy-bench --json`, "
        "`scripts/plot.py`); do not edit by hand. Raw results: `bench-out/results.json`, `bench-out/policy.json` "
        "(not committed).",
        "",
        f"- **Machine:** {m['cpuModel']}, `nproc` = {m['nproc']}, `uname -m` = {m['arch']}, kernel {m['kernel']}, "
        f"{m['memTotalMiB']:,} MiB RAM",
        f"- **Software:** {(m['pipewire'] or 'libpipewire 0.3.65').replace('Compiled with ', '')}, "
        f"{(m['wireplumber'] or 'libwireplumber 0.4.13').replace('Compiled with ', '')}, "
        f"{m['swift']}; commit `{m['gitCommit']}`{' (with uncommitted changes)' if m['gitDirty'] else ''}",
        f"- **Date:** {m['date']}; **command:** `{m['command']}`; audio-session-bench ran {res['totalSeconds']:.0f} s"
        + (f", the whole `make bench` {wall:.0f} s (build included)" if wall else ""),
        f"- **Load average** (1/5/15 min) at start {', '.join(f'{x:.2f}' for x in la)}, at end "
        f"{', '.join(f'{x:.2f}' for x in lb)}: the machine was shared with other builds and tests, "
        "so timings carry that noise.",
        "- **Systems:** *module* = PipeWire 0.3.65 + WirePlumber 0.4.13 + `libpipewire-module-audio-session` "
        "(the build tree's module); *baseline* = the same sandbox with `--no-module`, i.e. stock PipeWire + "
        "WirePlumber. Both are private headless sandboxes (`Sources/Sandbox`: session D-Bus, pipewire, wireplumber, "
        "pipewire-pulse, null sinks `speaker` and `headphones`) on this machine, in the same run.",
        "- **Spread:** every figure is the median with p10–p90 in parentheses unless said otherwise; n is the number of "
        "trials or samples.",
        "",
    ]


def target_headphones(mod, base):
    if not mod.get("headphoneLoss"):
        return []
    zero, total, failed = headphone_counts(mod)
    bzero, btotal, _ = headphone_counts(base)
    return [f"| 0 leaked samples in every headphone-loss trial | {zero}/{total} trials without a leaked sample"
            f"{f' ({failed} failed)' if failed else ''} | {bzero}/{btotal} | {met(total > 0 and zero == total)} |"]


def target_duck(mod, base):
    d = mod.get("duck") or {}
    if not d:
        return []
    reached, ran, reached_ms = duck_reached(mod)
    breached, bran, _ = duck_reached(base)
    times = [t.get("reachedMs") for t in ok_trials(d)]
    allin = bool(times) and all(num(x) is not None and x <= DUCK_TARGET_MS for x in times)
    L = [f"| duck reached within ramp + 1 cycle ({DUCK_TARGET_MS:.1f} ms) | {spread(reached_ms)} ms, "
         f"{reached}/{ran} trials reached | never ducks "
         f"({breached}/{bran} reached) | {met(allin)} |"]
    step = largest_duck_step(mod)
    if step is not None:
        L.append(f"| no gain step above 3 dB per 1024-sample cycle | largest {step:.2f} dB | no ramps | "
                 f"{met(step <= 3)} |")
    return L


def target_notify(mod):
    st = notify_latency(mod)
    if st is None:
        n = mod.get("notify") or {}
        return [f"| notification p99 under 5 ms | not measured: {n.get('error', 'section not run')} | — | not measured |"]
    p99 = st.get("p99")
    return [f"| notification p99 under 5 ms | p99 {f(p99, 2)} ms (p50 {f(st.get('median'), 2)} ms, "
            f"n = {st['n']}) | "
            f"no notifications | {met(num(p99) is not None and p99 < 5)} |"]


def target_policy(policy):
    slowest = slowest_policy_workload(policy)
    if not slowest:
        return []
    worst, all_under = slowest
    return [f"| decision p99 under 10 µs at 1,000 sessions | worst workload ({worst['workload']}) p99 "
            f"{worst['p99_ns'] / 1000:.2f} µs | — | {met(all_under)} |"]


def generation_pairs(res):
    """(generation, module system, stock system) for every generation measured with both."""
    sy = systems(res)
    out = []
    for gen, m, b in (("0.3.65", "module", "baseline"), ("1.4", "module-pw1.4", "baseline-pw1.4"),
                      ("1.6", "module-pw1.6", "baseline-pw1.6")):
        if sy.get(m) and sy.get(b):
            out.append((gen, sy[m], sy[b]))
    return out


def target_memory(pairs, p):
    rows = [(gen, added_daemon_memory(mod, base)) for gen, mod, base in pairs]
    rows = [(gen, a) for gen, a in rows if a]
    if not rows:
        return []
    worst = max(max(a[0], a[1] if a[1] is not None else a[0]) for _, a in rows)
    measured = "; ".join(f"{gen}: {a[0]:+.1f} MiB idle"
                         + (f", {a[1]:+.1f} MiB with {p['streams']} streams" if a[1] is not None else "")
                         for gen, a in rows)
    return [f"| under 8 MB added to the daemon | {measured} ({rows[0][1][2]}) | "
            + "; ".join(f"{gen}: {a[3]:.1f} MiB idle" for gen, a in rows) + f" | {met(worst * 1.048576 < 8)} |"]


def target_wakeups(mod, base):
    wake = idle_wakeups(mod)
    if wake is None:
        return []
    return [f"| zero idle wake-ups | {wake:.1f} per minute | {f(idle_wakeups(base))} per minute | "
            f"{met(wake == 0)} |"]


CPU_TARGET = 1.1
GRAPH_CYCLE_MS = 1024 / 48  # one cycle at 1024 frames, 48 kHz


def target_cpu(pairs):
    rows = [(gen, cost_ratios(mod, base)) for gen, mod, base in pairs]
    rows = [(gen, r) for gen, r in rows if r]
    if not rows:
        return []
    worst = max(ratio for _, r in rows for _, _, _, ratio in r)
    return [f"| daemon CPU per event at most {CPU_TARGET}× stock's | "
            + "; ".join(f"{gen}: " + ", ".join(f"{label} {ratio:.3f}×" for label, _, _, ratio in r) for gen, r in rows)
            + f" | 1.00× | {met(worst <= CPU_TARGET)} |"]


def target_stall(mod, base):
    a, b = loop_stall(mod), loop_stall(base)
    slow = (mod.get("churn") or {}).get("slowDecisionLogLines")
    if a is None or slow is None:
        return []
    # The module times each of its turns in the loop (an event's decision with the changes held
    # before it, a publication) and warns past one cycle: that count is the measure. The probe's
    # largest round trip also waits for the scheduler on two cores, stock's as much as the module's.
    return [f"| the module holds the daemon's loop no longer than one graph cycle ({GRAPH_CYCLE_MS:.1f} ms) | "
            f"{slow} turns over one cycle during the churn (the module's own timing); a probe's largest round trip "
            f"{a:.1f} ms | probe {f(b)} ms | {met(slow == 0)} |"]


def target_hostile_memory(pairs):
    rows = [(gen, hostile_memory(mod, base)) for gen, mod, base in pairs]
    rows = [(gen, m) for gen, m in rows if m]
    if not rows:
        return []
    worst = max(a - b for _, (a, b, _) in rows)
    return [f"| memory given back after hostile clients: within 8 MB of stock's | RssAnon "
            + "; ".join(f"{gen}: {a:.1f} MiB ({a - b:+.1f} MiB)" for gen, (a, b, _) in rows)
            + f", {rows[0][1][2]} | " + "; ".join(f"{gen}: {b:.1f} MiB" for gen, (_, b, _) in rows)
            + f" | {met(worst * 1.048576 <= 8)} |"]


def target_call_resume(res):
    sy = systems(res)
    peer = sy.get("peer-pw1.4") or {}
    _, _, pm = call_resume(peer)
    if num(pm.get("median")) is None:
        return []
    mods = [(gen, sy.get(name) or {}) for gen, name in (("0.3.65", "module"), ("1.4", "module-pw1.4"), ("1.6", "module-pw1.6"))]
    mods = [(gen, num(call_resume(m)[2].get("median"))) for gen, m in mods]
    mods = [(gen, v) for gen, v in mods if v is not None]
    same = dict(mods).get("1.4")
    if same is None:
        return []
    return [f"| music back after a call no later than the peer's (WirePlumber 0.5's role policy, same PipeWire) | "
            + "; ".join(f"{gen}: {v:.1f} ms" for gen, v in mods)
            + f" | peer on 1.4: {pm['median']:.1f} ms | {met(same <= pm['median'])} (1.4) |"]


def md_targets(res, policy):
    sy = systems(res)
    mod, base = sy.get("module") or {}, sy.get("baseline") or {}
    pairs = generation_pairs(res)
    return (["## Targets", "", "| target | measured (module) | baseline | |", "|---|---|---|---|"]
            + target_headphones(mod, base) + target_duck(mod, base) + target_notify(mod) + target_policy(policy)
            + target_memory(pairs, res["parameters"]) + target_wakeups(mod, base)
            + target_cpu(pairs) + target_stall(mod, base) + target_hostile_memory(pairs) + target_call_resume(res)
            + [""])


def md_headphones(res, rel):
    sy = systems(res)
    hl = (sy.get("module") or {}).get("headphoneLoss") or []
    hlb = (sy.get("baseline") or {}).get("headphoneLoss") or []
    p = res["parameters"]
    L = []
    w = L.append
    w("## 1. Headphone loss (R30, S7)")
    w("")
    w(f"A client plays a 375 Hz tone (-6 dBFS) on `headphones` (the default sink); the headphones' node is destroyed "
      f"(`pw-cli destroy`, an unplug); WirePlumber moves the orphaned stream to `speaker`. The speaker's monitor is "
      f"recorded (`pw-record`, s16 stereo); a trial's window runs from just before the `pw-cli destroy` "
      f"to 0.25 s after the stream's link to the speaker appears (recorded by a `pw-record` started for the trial). *Leaked samples* = non-zero samples (both channels) "
      f"in that window. {p['hlTrials']} trials per client and system, one sandbox per system reused across trials, "
      f"the headphones re-added before each trial; the player is linked to the headphones alone and plays for {p.get('hlSettle', 0.1)} s "
      f"before the unplug. The two systems' trials ran at the same time (two sandboxes side by side: the trials wait on "
      f"the graph, not on the CPU).")
    w("")
    w("| client | system | trials | without a leak | leaked samples per trial | first sound on the speaker after the unplug (ms; ±1 quantum, 21 ms) | failed |")
    w("|---|---|---:|---:|---|---|---:|")
    for name, rows in (("module", hl), ("baseline", hlb)):
        for c in rows:
            w(f"| `{c['command']}` | {name} | {len(c['leakedSamples'])} | {c['zeroLeakTrials']} | "
              f"{spread(c['leaked'], 0)} | {spread(c['firstSoundMs'], 1)} | {c['failed']} |")
    w("")
    if hl and hlb:
        w("Ratio: the module lets through "
          + "; ".join(f"{c['client']}: {f(c['leaked'].get('median'), 0)} vs {f(b['leaked'].get('median'), 0)} "
                      f"median samples"
                      for c, b in zip(hl, hlb))
          + " (a ratio of medians is 0 when the module leaks nothing). The baseline's count is simply the window: the "
            "stream keeps playing on the speaker at full level.")
        w("")
        starts = [(name, c) for name, rows in (("module", hl), ("baseline", hlb)) for c in rows]
        w("Before the unplug (from the recorder's start to the unplug, while the player starts on the headphones) the "
          "speaker received non-zero samples in "
          + ", ".join(f"{name} {c['client']} {c['trialsWithStartSamples']}/{len(c['startSamples'])}" for name, c in starts)
          + " trials. Each trial starts its own recorder after the headphones are back: a recorder left running on the "
            "speaker's monitor is moved to the headphones by WirePlumber when they come back (found while building this "
            "bench), and every trial checks that the recorder is fed by the speaker alone before the unplug.")
        w("")
        errs = [e for _, c in starts for e in c.get("errors", [])]
        if errs:
            w("Failed trials (first errors): " + "; ".join(f"`{e}`" for e in errs[:4]))
            w("")
    if rel.get("headphones"):
        w(f"![speaker level around the unplug]({rel['headphones']})")
        w("")
    return L


def md_ducking(res, rel):
    sy = systems(res)
    mod, base = sy.get("module") or {}, sy.get("baseline") or {}
    d, db = mod.get("duck") or {}, base.get("duck") or {}
    L = []
    w = L.append
    w("## 2. Ducking (R3, S4, policy §12)")
    w("")
    w("Music (`pw-play --media-role Music`, 375 Hz) plays on the headphones; a 1 s navigation prompt "
      f"(`{(d or db).get('promptCommand', 'pw-play --media-role Navigation prompt.wav')}`, 1500 Hz) plays on the same "
      "sink. The sink's monitor is recorded and a Goertzel filter separates the two tones exactly (whole cycles per "
      "window), so the prompt's first sample and the music's level share one timeline. *Reached*: from the prompt's "
      "first sample to the first 256-frame window of music within 1 dB of the duck level (level before − 13.98 dB; "
      "resolution ~1.3 ms). *Largest step*: the largest level change between consecutive 1024-frame blocks of the music "
      "during the ramp down and the ramp up. *Level error*: median music level while ducked minus the target. "
      "The prompt's *activation* is taken as its first audible sample; a stream's first cycle can be silent, so the "
      "true activation may be up to a cycle or two earlier.")
    w("")
    w("| system | trials | reached | reached (ms) | level error (dB) | music change during the prompt (dB) | largest step down (dB) | largest step up (dB) | back to the level before (ms after the prompt) |")
    w("|---|---:|---:|---|---|---|---|---|---|")
    for name, s in (("module", mod), ("baseline", base)):
        r = s.get("duck") or {}
        if not r:
            continue
        reached, ran, reached_ms = duck_reached(s)
        w(f"| {name} | {ran} | {reached}/{ran} | {spread(reached_ms)} | {spread(duck_level_error(s), 2)} | "
          f"{spread(r['changeDuringPromptDb'], 2)} | {spread(r['stepDownDb'], 2)} | {spread(r['stepUpDb'], 2)} | "
          f"{spread(r['restoreMs'])} |")
    w("")
    if db:
        ch = (db.get("changeDuringPromptDb") or {}).get("median")
        breached, bran, _ = duck_reached(base)
        w(f"The baseline does not duck: measured, the music's level changed by {f(ch, 2)} dB during the prompt "
          f"and the duck level was reached in {breached} of "
          f"{bran} trials. Stock WirePlumber 0.4.13 has no role-based ducking "
          "unless its endpoint policy is configured.")
        w("")
    if d and duck_reached(mod)[0] == 0:
        w("**The module did not duck in this run** (measured: the music's level did not reach the duck level).")
        w("")
    if rel.get("duck"):
        w(f"![music envelope through a duck]({rel['duck']})")
        w("")
    return L


def md_interrupt(res, rel):
    sy = systems(res)
    mod, base = sy.get("module") or {}, sy.get("baseline") or {}
    L = []
    w = L.append
    w("## 3. Interruption (R10, R14, R15, S2)")
    w("")
    w("Music as above; a 1 s legacy phone call (`pw-play --media-role Phone`, 1500 Hz) on the same sink. *Pause*: from "
      "the call's first audible sample to the music's last sample, found from the music-free run of 256-frame windows "
      "(hop 64 frames: ±1.3 ms); *resume*: from the call's last sample to the music's first sample again (the policy "
      "resumes legacy streams itself, R15), sample-exact: the sink plays digital silence between the two. *Within 40 dB*: "
      "to the music's first window within 40 dB of its level, later than the resume by the part of a fade-in (R42) that "
      "starts below that. A negative pause means the music stopped before the call could be "
      "heard: the policy acts on the call's activation (its node starting), which precedes its first audible sample. "
      "The resume starts when the call program leaves: pw-play 0.3.65 disconnects about three cycles later after its "
      "last sample than pw-play 1.4 does, and the module resumes the music as the call's client goes.")
    w("")
    w("| system | trials | music paused | pause (ms) | music resumed | resume (ms) | within 40 dB (ms) |")
    w("|---|---:|---:|---|---:|---|---|")
    for name, s in (("module", mod), ("baseline", base)):
        if not s.get("interrupt"):
            continue
        paused, ran, pause_ms = call_pause(s)
        resumed, _, resume_ms = call_resume(s)
        w(f"| {name} | {ran} | {paused}/{ran} | {spread(pause_ms)} | {resumed}/{ran} | "
          f"{spread(resume_ms)} | {spread((s.get('interrupt') or {}).get('resumeAudibleMs') or {})} |")
    w("")
    dib = base.get("interrupt") or {}
    if dib:
        ok = ok_trials(dib)
        w(f"The baseline does not interrupt: the music kept playing through the call in "
          f"{len([t for t in ok if not t.get('paused')])} of "
          f"{len(ok)} trials (measured).")
        w("")
    w("Fades (R42), from the same recordings, on every system measured: *fade-out*: from the music's first "
      "256-frame window 1 dB below its level to its first window 40 dB below it; *largest drop*: the music's largest "
      "fall from one 1024-frame block to the next while it was within 40 dB of its level (a cut falls 40 dB or more "
      "at once); *fade-in*: from the music's first window after the silence to its first within 1 dB of its level. "
      "Trials where the music was not paused have no fade.")
    w("")
    w("| system | paused in | fade-out (ms) | largest drop (dB per 1024 frames) | fade-in (ms) |")
    w("|---|---:|---|---|---|")
    for s in res["systems"]:
        di = s.get("interrupt")
        if not di:
            continue
        paused, ran, _ = call_pause(s)
        w(f"| {s['system']} | {paused}/{ran} | {spread(di.get('fadeOutMs'), 0)} | "
          f"{spread(di.get('fadeOutStepDb'), 1)} | {spread(di.get('fadeInMs'), 0)} |")
    w("")
    if rel.get("interrupt"):
        w(f"![music envelope through a call]({rel['interrupt']})")
        w("")
    return L


def md_notify(res):
    sy = systems(res)
    n = (sy.get("module") or {}).get("notify") or {}
    bn = (sy.get("baseline") or {}).get("notify") or {}
    L = []
    w = L.append
    w("## 4. Notification latency")
    w("")
    w("Method: the `AudioSession` library (`Sources/AudioSession`), two sessions in one helper process inside the "
      "sandbox: A (playback) is active; B (playback) calls `setActive(true)`, which publishes `audio.session.active` "
      "with `pw_core_update_properties` (the graph change), the module interrupts A (R1) and writes the event to the "
      "`audio-session` metadata; the latency ends when A's observer callback runs. Then B deactivates with "
      "`notifyOthersOnDeactivation` and A receives `interruption ended` (R7). One clock (the process's monotonic "
      "clock) for both ends.")
    w("")
    if notify_latency(sy.get("module") or {}) is not None:
        w("| event | n | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) |")
        w("|---|---:|---:|---:|---:|---:|")
        for label, st in (("interruption began", n["beganMs"]), ("interruption ended", n["endedMs"]),
                          ("both", notify_latency(sy["module"]))):
            w(f"| {label} | {st['n']} | {f(st.get('median'), 3)} | {f(st.get('p90'), 3)} | {f(st.get('p99'), 3)} | {f(st.get('max'), 3)} |")
        w("")
        if n.get("failed"):
            w(f"{n['failed']} trials failed: " + "; ".join(f"`{e}`" for e in n.get("errors", [])[:3]))
            w("")
    else:
        w(f"Not measured with the module: {n.get('error', 'section not run')}.")
        w("")
    w("Baseline: stock WirePlumber publishes no session notifications"
      + (f" (measured: `{bn.get('error')}`)." if bn.get("error") else "."))
    w("")
    return L


def md_policy(policy, rel):
    L = []
    w = L.append
    w("## 5. Policy core decision cost")
    w("")
    w("`swift run -c release session-policy-bench --json` (Sources/session-policy-bench; its header documents the "
      "workloads): one decision = one `SessionPolicy.handle(_:)` call, timed with `ContinuousClock`, 100 warm-up rounds "
      "discarded. *fan-out* is the R22 hint flip that notifies every active session: linear in the active sessions by "
      "specification, reported with its cost per session. *many-streams* is one declared session owning N streams "
      "(the `sessions` column), one stream added and removed per round: the bench's churn pattern.")
    w("")
    if policy:
        w("| workload | sessions | decisions | effects per decision | p50 (µs) | p99 (µs) | p50 growth vs 10 sessions |")
        w("|---|---:|---:|---:|---:|---:|---:|")
        base10 = {r["workload"]: r["median_ns"] for r in policy if r["sessions"] == 10}
        for r in policy:
            g = r["median_ns"] / base10[r["workload"]] if base10.get(r["workload"]) else None
            w(f"| {r['workload']} | {r['sessions']:,} | {r['decisions']:,} | {r['effects_per_decision']} | "
              f"{r['median_ns'] / 1000:.2f} | {r['p99_ns'] / 1000:.2f} | {f(g, 2)}× |")
        w("")
        if rel.get("policy"):
            w(f"![policy core cost vs sessions]({rel['policy']})")
            w("")
    else:
        w("Not measured in this run (session-policy-bench failed or was skipped; see the bench log).")
        w("")
    return L


def side_by_side_row(label, a, b, unit, digits=1, scale=1.0):
    """| label | module | baseline | module − baseline |"""
    a, b = num(a), num(b)
    diff = f"{(a - b) * scale:+.{digits}f}{unit}" if a is not None and b is not None else "—"
    fa = f"{a * scale:.{digits}f}{unit}" if a is not None else "—"
    fb = f"{b * scale:.{digits}f}{unit}" if b is not None else "—"
    return f"| {label} | {fa} | {fb} | {diff} |"


def md_daemon(res):
    sy = systems(res)
    mod, base = sy.get("module") or {}, sy.get("baseline") or {}
    i, ib = mod.get("idle") or {}, base.get("idle") or {}
    s_, sb = mod.get("streams") or {}, base.get("streams") or {}
    c, cb = mod.get("cpu") or {}, base.get("cpu") or {}
    p = res["parameters"]
    L = []
    w = L.append
    w("## 6. Cost in the daemon")
    w("")
    w(f"`pipewire`'s `VmRSS` (`/proc/<pid>/status`); CPU time = the sum of `/proc/<pid>/task/*/schedstat` (ns) over "
      f"the daemon's threads; wake-ups = voluntary + involuntary context switches of all its threads "
      f"(`/proc/<pid>/task/*/status`) over a {p['idleSeconds']:.0f} s window once every sink is suspended and no client "
      f"is streaming, scaled to one minute (the two sandboxes idled at the same time). {p['streams']} streams: one "
      f"AudioSession client with {p['streams']} `AudioOutput` streams playing silence (legacy, no role). CPU per 1,000 "
      + (f"events: one stream paused and resumed at {p['toggleRate']:.0f} per second, in bursts of {p['burstEvents']:,} "
         if p.get("burstEvents") else
         f"events: one stream paused and resumed {p['toggleEvents']:,} times at {p['toggleRate']:.0f} per second ")
      + f"(each a running-state change the policy decides on); the daemon also mixes that stream while it runs, in both "
      f"systems, so the difference is the module's share. "
      + ("The CPU figures (this section's, the churn's and the profile) were measured with no other system's section "
         "running at the same time" + ("." if p.get("costInterleaved") else ", one system after the other.")
         + (f" The pause/resume toggles, the churn's rounds and the property floods ran every process of theirs (the "
            f"daemons, WirePlumber, pipewire-pulse and the clients, of both systems) on one CPU, CPU {p['costCPU']}: on "
            "this virtual machine a wake-up that crosses CPUs costs the kernel an interrupt between them, and which "
            "process lands on which CPU changes from one daemon to the next; the kernel's share of the daemon's CPU "
            "then varied up to fivefold between two daemons of the same system doing the same work, far more than "
            "the module adds. On one CPU every wake-up stays local, for both systems alike."
            if p.get("costCPU") is not None else "")
         if p.get("costSectionsAlone") else
         "The CPU figures were measured while the other systems' sections ran on the same two cores: each system's "
         "figure carries a different load, so their ratio is noisy.")
      + ((f" The pause/resume toggles run in {p['burstRounds']} rounds of {p['burstsPerRound']} bursts per system, "
          + ("each round on a new pair of daemons (two daemons of the same system differ by a few percent for reasons of "
             "their own, so the median is over several pairs, not one) with a new client whose stream plays between its "
             "bursts, " if p.get("burstDaemonsPerRound") else
             "each round with a new client whose stream plays between its bursts, ")
          + "the module system's and the stock "
          "system's bursts in turn (module then stock, stock then module, and so on), both sandboxes up and nothing "
          "else running; the figure is the median of the bursts. The machine's load drifts over seconds by more than "
          "the module adds to an event: two bursts that pair up run a few seconds apart, under nearly the same load. "
          f"Each property flood runs {p.get('floodRounds')} times per system (a flood round lasts a fraction of a "
          "second, so one round's figure carries more of the machine's noise), each round with a new client, the "
          "rounds of the two systems alternating likewise; the figure is the median of the rounds.")
         if p.get("burstRounds") and p.get("costInterleaved") else
         (f" The pause/resume toggles run {p['costRounds']} times and each property flood "
          f"{p.get('floodRounds', p['costRounds'])} times (a flood round lasts a fraction of a second, so one round's "
          "figure carries more of the machine's noise), each round with a new client; "
          "the figure is the median of the rounds (the daemon's CPU per event differs between rounds by more than the "
          "module adds, mostly its wake-ups' cost).") if p.get("costRounds") else "")
      + (" The rounds of a module system and of the stock system of the same generation alternate (module then stock, "
         "stock then module, and so on), both sandboxes up and nothing else running: the machine's load drifts over "
         "minutes by more than the module adds to an event, and alternating gives both systems the same drift."
         if p.get("costInterleaved") and not p.get("burstRounds") else ""))
    floods = {x["mode"]: x for x in mod.get("propertyFloods") or []}
    bfloods = {x["mode"]: x for x in base.get("propertyFloods") or []}
    rounds = []
    for label, a, b in [("pause/resume", c, cb)] + [(f"{m} updates", x, bfloods.get(m) or {}) for m, x in floods.items()]:
        ra, rb = a.get("roundsMsPerThousand"), b.get("roundsMsPerThousand")
        if ra and rb:
            rounds.append(f"{label}: module " + ", ".join(f"{v:.1f}" for v in ra)
                          + "; baseline " + ", ".join(f"{v:.1f}" for v in rb))
    if rounds:
        w("")
        w(("Each figure (a burst's for pause/resume, a round's for the floods), ms per 1,000: " if p.get("burstRounds")
           else "Each round's figure, ms per 1,000: ") + "; ".join(rounds) + ".")
    w("")
    w("| | module | baseline | module − baseline |")
    w("|---|---:|---:|---:|")
    mib = 1 / 1024
    w(side_by_side_row("RSS idle", i.get("rssKiB"), ib.get("rssKiB"), " MiB", 1, mib))
    w(side_by_side_row(f"RSS with {p['streams']} streams (settled)", s_.get("rssKiB"), sb.get("rssKiB"), " MiB", 1, mib))
    w(side_by_side_row("RSS without shared buffers, idle", i.get("rssNoShmemKiB"), ib.get("rssNoShmemKiB"), " MiB", 1, mib))
    w(side_by_side_row(f"RSS without shared buffers, {p['streams']} streams", s_.get("rssNoShmemKiB"),
                       sb.get("rssNoShmemKiB"), " MiB", 1, mib))
    w(side_by_side_row("CPU per 1,000 pause/resume events", c.get("cpuMsPerThousand"), cb.get("cpuMsPerThousand"), " ms", 1))
    for mode, label in (("activation", "CPU per 1,000 activation-request updates"), ("silent", "CPU per 1,000 silent-mode flips")):
        if mode in floods or mode in bfloods:
            w(side_by_side_row(label, (floods.get(mode) or {}).get("cpuMsPerThousand"),
                               (bfloods.get(mode) or {}).get("cpuMsPerThousand"), " ms", 1))
    w(side_by_side_row(f"idle wake-ups per minute ({p['idleSeconds']:.0f} s window)", idle_wakeups(mod),
                       idle_wakeups(base), "", 1))
    w(side_by_side_row("idle CPU in the window", i.get("cpuMsInWindow"), ib.get("cpuMsInWindow"), " ms", 2))
    w("")
    if mod.get("propertyFloods"):
        counts = {x["mode"]: x["updates"] for x in mod["propertyFloods"]}
        w(f"Property updates: one client rewrites its own properties as fast as the daemon takes them "
          f"(`Tests/Fixtures/prop-flood.c`, a round trip every 100 updates): {counts.get('activation', 0):,} bumps of "
          f"`audio.session.activation-request` of a declared playback session (what every `setActive` sends), then "
          f"{counts.get('silent', 0):,} flips of `audio.session.control.silent-mode`. The module reads a burst once, when the "
          "daemon's loop has handled the messages at hand, as it stands then.")
        w("")
    ratios = cost_ratios(mod, base)
    if ratios:
        spreads = cost_spreads(mod, base)

        def spread(label):
            q = spreads.get(label)
            return f", the middle half of the pairs {q[0]:.2f}–{q[1]:.2f}×" if q else ""
        w("Daemon CPU per event, module against stock: " + "; ".join(
            f"{label} {ratio:.3f}× (medians {a:.1f} against {b:.1f} ms per 1,000{spread(label)})"
            for label, a, b, ratio in ratios)
          + ". Where the rounds (for pause/resume, the bursts) alternated, or ran side by side (the churn's, when "
          "the report says so below), the ratio is the median of the pairs' own ratios, each module round against "
          "the stock round that ran next to it or at the same time: the load of the machine drifts between rounds by "
          "more than the module adds, and within a pair that drift cancels; the medians of the two "
          "systems' rounds are given for reference, and the middle half of the pairs' ratios (first to third "
          "quartile) says how far one pair strays from the median.")
        wa, wb = c.get("roundsWakeupsPerThousand"), cb.get("roundsWakeupsPerThousand")
        if wa and wb and len(wa) == len(wb):
            extra = statistics.median([x - y for x, y in zip(wa, wb)]) / 1000
            w("")
            w(f"The daemon's context switches (all its threads) per pause/resume event: {statistics.median(wa) / 1000:.2f} "
              f"with the module, {statistics.median(wb) / 1000:.2f} without; the median of the pairs' differences is "
              f"{extra:+.3f} per event. Traced once with strace over a burst on PipeWire 1.6, the daemon made the same system calls with the "
              "module as without it, apart from the module's publishing timer, armed a few times a second (its metadata "
              "writes wait for the publishing interval): a difference here is the daemon being preempted while it "
              "decides. Every daemon of a sandbox (PipeWire, WirePlumber, pipewire-pulse) runs at the same priority, "
              "without real-time scheduling: their configuration is copied without module-rt.")
        attempts = [(f"{gen} {label}", n, seen) for gen, m_, _ in generation_pairs(res)
                    for label, n, seen in cost_attempts(m_)]
        if attempts:
            w("")
            w("A cost section runs again while the stock daemon's own figures spread more than a quiet machine's "
              f"(their third quartile over their first above {p.get('calmSpread') or 1.5:g}: the stock daemon does the "
              "same work in every round, so a wide spread says the machine was busy with something else), at most "
              f"{p.get('costAttempts') or 3} times; the attempt "
              "whose stock figures spread least is kept, whatever the module's figures. This run: " + "; ".join(
                  f"{label} ran {n} times, the stock figures spreading "
                  + ", ".join(f"{x:.2f}×" for x in spreads_seen)
                  for label, n, spreads_seen in attempts) + ".")
        w("")
    if num(i.get("rssKiB")) and num(ib.get("rssKiB")):
        w(f"Ratio: the daemon's idle RSS with the module is {i['rssKiB'] / ib['rssKiB']:.2f}× the baseline's "
          "(most of the addition is the statically linked Swift runtime and core).")
    if s_.get("rssSamplesKiB") and sb.get("rssSamplesKiB"):
        w("")
        settled = "settled" if s_.get("rssSettled") and sb.get("rssSettled") else "NOT settled within 20 s"
        running = "/".join(str(x.get("running")) for x in (s_, sb) if x.get("running") is not None)
        w(f"With {p['streams']} streams the daemon's memory grows with each stream that starts. Each system is measured once, "
          "right after its idle section, one system at a time: every daemon has the same history behind it (started, idle), "
          "and the same streams made again on the same daemon take far more (PipeWire 1.6: 41, 148, then 567 MB of RssAnon "
          "in three rounds, with the module or without), so a second round would measure that growth. The bench waits until "
          f"WirePlumber has linked what it can and as many streams run for 10 s, as the client itself counts them ({running or '?'} of "
          f"{p['streams']} in module/baseline: a sink mixes at most 128 inputs on PipeWire 0.3.65), then samples every 0.5 s until four samples in a "
          "row lie within 0.5% (" + settled + "), and reports the median of the last three. VmRSS samples, MiB: module "
          + ", ".join(f"{v / 1024:.0f}" for v in s_["rssSamplesKiB"]) + "; baseline "
          + ", ".join(f"{v / 1024:.0f}" for v in sb["rssSamplesKiB"]) + ". *RSS without shared buffers* (`RssAnon` + `RssFile`) leaves out `RssShmem`, the "
          "streams' shared (memfd) buffers, and keeps the daemon's code and heap, where the module's own memory lives; "
          "the 8 MB target is judged on it.")
        w("")
    return L


def churn_row(ch, chb, label, key, digits=0, scale=1.0, unit=""):
    """| label | module | baseline | for one key of the churn results."""
    a, b = num(ch.get(key)), num(chb.get(key))
    fa = f"{a * scale:,.{digits}f}{unit}" if a is not None else "—"
    fb = f"{b * scale:,.{digits}f}{unit}" if b is not None else "—"
    return f"| {label} | {fa} | {fb} |"


CHURN_ROWS = [
    ("seconds", "seconds", 1),
    ("streams created", "created"),
    ("streams destroyed", "destroyed"),
    ("stream events (creations + destructions) per second", "streamEventsPerSecond", 1),
    ("metadata updates (decisions) per second", "metadataUpdatesPerSecond", 1),
    ("RSS before", "rssBeforeKiB", 1, 1 / 1024, " MiB"),
    ("RSS peak", "rssPeakKiB", 1, 1 / 1024, " MiB"),
    ("RSS after", "rssAfterKiB", 1, 1 / 1024, " MiB"),
    ("daemon CPU during the churn", "cpuMs", 0, 1, " ms"),
    ("daemon CPU per 1,000 stream events (this one churn)", "cpuMsPerThousandStreamEvents", 1, 1, " ms"),
    ("metadata updates seen", "metadataUpdates"),
    ("xrun / late-client log lines", "xrunLogLines"),
    ("largest lag of the churn schedule (the helper's own)", "maxLateMs", 1, 1, " ms"),
    ("the module's warnings of a decision longer than a cycle", "slowDecisionLogLines"),
    ("daemon loop: round trips of the probe", "loopRoundTrips"),
    ("daemon loop: largest round trip", "loopLargestMs", 1, 1, " ms"),
    ("daemon loop: p99 round trip", "loopP99Ms", 2, 1, " ms"),
    ("daemon loop: median round trip", "loopMedianMs", 3, 1, " ms"),
]


def md_churn(res, rel):
    sy = systems(res)
    ch, chb = (sy.get("module") or {}).get("churn") or {}, (sy.get("baseline") or {}).get("churn") or {}
    p = res["parameters"]
    L = []
    w = L.append
    w("## 7. Churn")
    w("")
    w(f"One AudioSession client keeps {p['churnLive']} streams (silence, legacy, no role); {p['churnRate']:.0f} times a "
      f"second it destroys the oldest and creates a new one, for {p['churnSeconds']:.0f} s. Memory before (idle, sinks "
      f"suspended) and after (streams gone, sinks suspended again); *decisions*: `audio-session` metadata updates seen "
      f"by a `pw-metadata -m` listener (each session published or removed; the module's decisions made visible). "
      f"The listener sends nothing once it has started, and PipeWire 0.3.65 gives a client no update about a node "
      f"newer than the last message that client sent: it sees the global state, and the sessions of streams that "
      f"were there when it started, but not those of the streams made since (PipeWire 1.x sends them all). On "
      f"0.3.65 the figure is a lower bound of the module's writes; "
      f"xruns: lines of the daemon's log (warnings and errors) that mention an xrun, an underrun or a late client. "
      f"*Daemon loop*: a probe client (`Tests/Fixtures/loop-probe.c`) asks the daemon for a round trip (a core sync) "
      f"every 5 ms during the churn; a round trip waits for whatever the daemon's main loop was doing, so the largest "
      f"one bounds how long the loop was held. The schedule's lag is the churn helper's own: it is an AudioSession "
      f"client, whose thread also reads every session the module publishes, so it says little about the daemon.")
    w("")
    w("| | module | baseline |")
    w("|---|---:|---:|")
    for label, key, *fmt in CHURN_ROWS:
        w(churn_row(ch, chb, label, key, *fmt))
    w("")
    if num(ch.get("metadataUpdates")) is not None and num(ch.get("streamEventsPerSecond")):
        w(f"The listener saw {ch['metadataUpdates']:,} metadata updates for about "
          f"{ch['streamEventsPerSecond'] * (ch.get('seconds') or 0):,.0f} stream events (a lower bound, as said "
          "above). Memory: both daemons keep most of what 200 streams took "
          "(compare the idle figure of section 6 with *RSS before*, measured after the 200-stream test); the "
          "difference between *after* and *before* is what the churn added.")
        w("")
    costs = []
    for gen, mname, bname in (("0.3.65", "module", "baseline"), ("1.4", "module-pw1.4", "baseline-pw1.4"),
                              ("1.6", "module-pw1.6", "baseline-pw1.6")):
        a, b = (sy.get(mname) or {}).get("churnCost") or {}, (sy.get(bname) or {}).get("churnCost") or {}
        ra, rb = a.get("roundsMsPerThousand"), b.get("roundsMsPerThousand")
        if a.get("ok") and b.get("ok") and ra and rb:
            line = (f"{gen}: module " + ", ".join(f"{v:.0f}" for v in ra) + f" (median {a['cpuMsPerThousand']:.0f}); "
                    "stock " + ", ".join(f"{v:.0f}" for v in rb) + f" (median {b['cpuMsPerThousand']:.0f})")
            kept = []
            for label, r in (("module", a), ("stock", b)):
                played, unplayed, sm = r.get("roundsPlayed"), r.get("roundsUnplayed"), r.get("roundsSessionManagerMs")
                if played and unplayed is not None:
                    part = f"{label} {sum(played):,} of {sum(played) + sum(unplayed):,} streams played"
                    if sm and r.get("seconds"):
                        part += (f", WirePlumber busy {statistics.median(sm) / 10 / r['seconds']:.0f}% of the time "
                                 "(median round)")
                    kept.append(part)
            costs.append(line + (" [" + "; ".join(kept) + "]" if kept else ""))
        for name, r in ((mname, a), (bname, b)):
            if r and not r.get("ok"):
                costs.append(f"{name}: churn CPU not measured: `{r.get('error')}`")
    if costs and p.get("churnCostLive"):
        w(f"**CPU per 1,000 stream events** (the figure compared with stock in section 1) comes from separate rounds, "
          f"not from the churn above: {p.get('churnCostRounds', '?')} rounds per system, each on a daemon started for "
          + ("it, a module round and a stock round side by side: both systems churn at the same time, so the "
             "machine's load, which drifts over seconds by more than the module adds (the same system's rounds a "
             "few minutes apart differed by up to 16%), is the same for both figures of a pair, and the ratio is the "
             "median of the pairs' own ratios. "
             if p.get("churnCostSideBySide") else "it, module and stock rounds alternating. ")
          + f"A round keeps {p['churnCostLive']} streams (silence, legacy, no "
          f"role) and for {p.get('churnCostSeconds', 0):.0f} s replaces the oldest, at most "
          f"{p.get('churnCostRate', 0):.0f} times a second, each new stream made once the last one plays (linked by "
          "the session manager and running); the first streams play before the round starts, and all of them are "
          "destroyed at its end. So every stream event is a whole one, in both systems: made, linked, running, "
          "unlinked and destroyed. The churn above, faster than the session manager links, does not give that: "
          "WirePlumber 0.4.13 spent a whole CPU on it, and the links the daemon made in 15 s of it went from 193 to "
          "748 from one daemon to the next for the same 750 streams, so the daemon's CPU per event measured how far "
          "the session manager got. Every live stream plays all round, so a system that made fewer streams in a "
          "round's time would also be charged more of the mixing per event: the rate is one that the session "
          "managers keep up with, and the streams that played in each system say whether they did. "
          + (f"Each system ran every process of its round (daemon, session manager, PulseAudio server, client) on a "
             f"CPU of its own, CPU {p['churnCostCPUs'][0]} or CPU {p['churnCostCPUs'][1]} (where the bench itself and "
             "the other sections' idle sandboxes are), the module's on the first in odd rounds and on the second in "
             "even ones, so that neither keeps the busier CPU; within a system every wake-up stays on its CPU. "
             if p.get("churnCostSideBySide") and p.get("churnCostCPUs") else
             f"Like the other CPU sections, the rounds ran every process on one CPU (CPU {p['costCPU']}). "
             if p.get("costCPU") is not None else "")
          + "Each round's figure, ms per 1,000 stream events, with the streams made during the churns that played "
          "(within 5 s) and how busy the session manager was: " + "; ".join(costs) + ".")
        w("")
    elif costs:
        w(f"**CPU per 1,000 stream events** (the figure compared with stock in section 1) comes from separate rounds, "
          f"not from the churn above: {p.get('churnCostRounds', '?')} rounds per system, each on a daemon started for "
          f"it, {p.get('churnCostSeconds', 0):.0f} s of the same churn after its {p['churnLive']} streams are made, and their "
          "destruction at the end; "
          "module and stock rounds alternating. Most of a stream's creation and destruction is PipeWire's own, and "
          "its cost differs from one daemon to the next by far more than the module adds: after each node's "
          "destruction the daemon gives free heap pages back to the system (`malloc_trim`), and the next stream's "
          "mixer faults them in again, a different number of them on each daemon (20 s of this churn on fresh "
          "stock PipeWire 1.6 daemons took 2.2 to 3.3 s of CPU, while four rounds on one daemon differed by 4% on a module daemon and 14% on a stock one). "
          "One daemon per system would compare two draws of that; the median of several compares the systems. "
          "Each round's figure, ms per 1,000 stream events: " + "; ".join(costs) + ".")
        w("")
    for name in ("module", "baseline", "module-pw1.4", "baseline-pw1.4", "module-pw1.6", "baseline-pw1.6"):
        failed = ((sy.get(name) or {}).get("churnCost") or {}).get("roundFailures") or []
        if failed:
            w(f"In the CPU rounds {len(failed)} round(s) on {name} failed and ran once more on a new daemon "
              f"(`{failed[0][:200]}`).")
            w("")
        dead = ((sy.get(name) or {}).get("churnCost") or {}).get("helperCrashReports") or []
        if dead:
            first = next((line for line in dead[0].splitlines() if line.strip()), "")
            w(f"In the CPU rounds the churn helper died {len(dead)} time(s) on {name} (`{first[:160]}`); each such round "
              "ran once more on a new daemon, and the helper's output from the crash on is in results.json "
              "(`churnCost.helperCrashReports`).")
            w("")
    for name, r in (("module", ch), ("baseline", chb)):
        if r.get("helperCrashes"):
            w(f"The churn helper (an AudioSession client) died or stalled {len(r['helperCrashes'])} time(s) in the {name} sandbox "
              f"(`{r['helperCrashes'][0]}`); a new one carried on for the remaining time and its streams went with "
              "its connection.")
            w("")
        if r.get("error"):
            w(f"{name}: churn failed: `{r['error']}`")
            w("")
        if r.get("xrunSamples"):
            w(f"{name} xrun lines, first: " + "; ".join(f"`{x}`" for x in r["xrunSamples"][:2]))
            w("")
    if rel.get("daemon"):
        w(f"![daemon memory, CPU and notification latency]({rel['daemon']})")
        w("")
    return L


def md_footprint(fp):
    """What one decision touches with cold caches (scripts/footprint.py), or nothing."""
    rows = (fp or {}).get("workloads") or []
    if not rows:
        return []
    L = ["### What one decision fetches into cold caches", ""]
    w = L.append
    w("Most of the module's time in the daemon is spent fetching its code and data into caches that the daemon's "
      "other work emptied since the last event, not running instructions. `scripts/footprint.py` counts what one "
      "decision fetches, with no clock involved: session-policy-bench decides through the module core's C entry "
      "points, with the property sets the daemon hands them, under "
      f"Valgrind's cache simulator ({fp.get('valgrind', 'cachegrind')}), with a buffer of "
      f"{fp.get('evictionBytes', 0) // (1024 * 1024)} MiB written between two decisions so that each starts with "
      f"nothing of its own in the simulated {fp.get('lastLevelCacheBytes', 0) // (1024 * 1024)} MiB last-level cache; "
      "the start of the program cancels out between a run of 200 and one of 400 rounds. Lines are 64 bytes; "
      "the counts are an upper bound of the daemon's, where some lines stay cached between events. They are the "
      "same from one run to the next and do not depend on the machine's load: the module core runs on a simulated "
      "clock there, 5 ms between two decisions as in the pause/resume benchmark, so its publishing interval writes "
      "the same publications at the same decisions. "
      + ("The benchmark was laid out as the module is (`meson-shim/lay-out-module.sh`, llvm-bolt: the blocks a "
         "decision runs together, the rest moved away), so the code lines are those of the code the daemon runs."
         if fp.get("laidOut") else
         "The benchmark was measured as linked, not laid out as the module is (llvm-bolt was not installed): "
         "the daemon's module fetches fewer code lines than these."))
    w("")
    w("| decision | sessions | instructions | cold code lines | cold data lines read | written | functions |")
    w("|---|---:|---:|---:|---:|---:|---:|")
    what = {"toggle": "a stream starts or stops (toggle)", "churn": "a stream comes or goes (churn)",
            "declared": "a declared session's property change is held (declared)"}
    for r in rows:
        w(f"| {what.get(r['workload'], r['workload'])} | {r['sessions']} | {r['instructions']:,} | {r['coldCodeLines']:,} | "
          f"{r['coldDataLinesRead']:,} | {r['coldDataLinesWritten']:,} | {r['functionsTouched']} |")
    w("")
    for r in rows:
        if r.get("top"):
            w(f"Most lines fetched ({r['workload']}): " + "; ".join(
                f"`{t['symbol'].replace('|', '/')}` {max(0, t['coldCodeLines']):.0f} code + {max(0, t['coldDataLines']):.0f} data"
                for t in r["top"][:6]) + ".")
            w("")
    return L


def md_profile(res, footprint=None):
    """Where the daemon's time goes: perf's self time per workload (the module system), and
    what one decision fetches into cold caches."""
    prof = (systems(res).get("module") or {}).get("profile") or {}
    fp = md_footprint(footprint)
    if not prof and not fp:
        return []
    L = ["## 8. Where the daemon's time goes", ""]
    w = L.append
    if not prof:
        return L + fp
    if prof.get("error"):
        w(f"Not profiled: {prof['error']}.")
        w("")
        return L + fp
    w("`perf record -F 1999 -p <pipewire>` (self time, no call graphs) on the module system's daemon while each "
      "workload runs (the pause/resume toggles and the activation-request flood of section 6, 20 s of the churn of "
      "section 7); `perf report --sort dso,sym`. Shares are of all the daemon's samples (its main loop and its data "
      "thread; the kernel's part is mostly the daemon's own system calls and wake-ups). Swift symbols are demangled "
      "(`swift demangle --simplified`).")
    w("")
    for wl in prof.get("workloads") or []:
        w(f"**{wl['name']}** ({f(wl.get('samples'), 0)} samples)" + (f": `{wl['error']}`" if wl.get("error") else ""))
        w("")
        if wl.get("objects"):
            w("By object: " + "; ".join(f"`{o['object']}` {o['percent']:.1f}%" for o in wl["objects"]) + ".")
            w("")
        if wl.get("top"):
            w("| self | object | symbol |")
            w("|---:|---|---|")
            for e in wl["top"]:
                sym = e["symbol"].replace("|", "\\|")
                w(f"| {e['percent']:.2f}% | `{e['object']}` | `{sym}` |")
            w("")
        if wl.get("module"):
            w("The module's own symbols: " + "; ".join(
                f"`{e['symbol'].replace('|', '/')}` {e['percent']:.2f}%" for e in wl["module"]) + ".")
            w("")
    return L + fp


def md_problems(res):
    problems = []
    for name, s in systems(res).items():
        if s.get("sandboxError"):
            problems.append(f"{name}: the sandbox did not start: `{s['sandboxError']}`")
        if s.get("daemonRestarts"):
            problems.append(f"{name}: a daemon exited during the run {s['daemonRestarts']} time(s); the sandbox was restarted")
        for key in ("idle", "streams", "cpu"):
            if (s.get(key) or {}).get("error"):
                problems.append(f"{name} {key}: `{s[key]['error']}`")
    if not problems:
        return []
    return ["## Problems in this run", ""] + [f"- {x}" for x in problems] + [""]


def md_reproducing():
    return [
        "## Reproducing",
        "",
        "```sh",
        "make bench            # installs what it needs (Debian 12, as root), builds, measures, writes this file",
        ".build/release/audio-session-bench --quick --out /tmp/b   # a quick look (few trials), results.json only",
        "```",
        "",
        "Options of `audio-session-bench` (trial counts, windows, sections, systems): "
        "`.build/release/audio-session-bench --help`. A misspelt section or system is an error before anything "
        "starts, and a run in which no system could be measured exits 1.",
        "",
    ]


def build_markdown(res, policy, plots, wall, footprint=None):
    rel = {k: os.path.relpath(v, ".") if v else None for k, v in plots.items()}
    L = (md_header(res, wall) + md_targets(res, policy) + md_headphones(res, rel) + md_ducking(res, rel)
         + md_interrupt(res, rel) + md_notify(res) + md_policy(policy, rel) + md_daemon(res) + md_churn(res, rel) + md_profile(res, footprint)
         + bench_generations.section(res) + bench_generations.peer_section(res) + bench_generations.faults_section(res)
         + md_problems(res)
         + md_reproducing())
    return "\n".join(L)


# ---------------------------------------------------------------- README summary

def readme_headphones(mod, base):
    if not mod.get("headphoneLoss"):
        return []
    zero, total, _ = headphone_counts(mod)
    _, btotal, _ = headphone_counts(base)
    bmed = leak_medians(base)
    return [f"- Headphone loss (pw-play, paplay, aplay): {zero}/{total} trials with 0 samples on the speaker "
            f"with the module; stock: {btotal} trials, median {f(min(bmed) if bmed else None, 0)}–"
            f"{f(max(bmed) if bmed else None, 0)} samples leaked per trial."]


def readme_duck(mod):
    if not mod.get("duck"):
        return []
    reached, ran, reached_ms = duck_reached(mod)
    return [f"- Ducking: duck level reached {f(reached_ms.get('median'))} ms after the prompt "
            f"(median; {reached}/{ran} trials), "
            f"level error {f(duck_level_error(mod).get('median'), 2)} dB, largest step "
            f"{f(largest_duck_step(mod), 2)} dB per cycle; stock does not duck."]


def readme_interrupt(mod):
    if not mod.get("interrupt"):
        return []
    paused, ran, pause_ms = call_pause(mod)
    _, _, resume_ms = call_resume(mod)
    pm = num(pause_ms.get("median"))
    when = ("—" if pm is None else
            f"{abs(pm):.1f} ms {'before' if pm < 0 else 'after'} the call's first audible sample")
    di = mod["interrupt"]
    fo, step, fi = di.get("fadeOutMs") or {}, di.get("fadeOutStepDb") or {}, di.get("fadeInMs") or {}
    fade = ""
    if fo.get("n") and fi.get("n"):
        fade = (f" It fades out over {f(fo.get('median'), 0)} ms first (largest drop {f(step.get('median'))} dB "
                f"per 1024 frames) and back in over {f(fi.get('median'), 0)} ms (R42); the resume is counted from "
                f"the call's last sample to the music's first.")
    return [f"- Interruption by a phone call: the music is silent {when} "
            f"({paused}/{ran} trials) and resumes "
            f"{f(resume_ms.get('median'))} ms after the call's end; stock keeps playing." + fade]


def readme_notify(mod):
    st = notify_latency(mod)
    if st is None:
        return []
    return [f"- Notification latency (AudioSession): p50 {f(st.get('median'), 2)} ms, "
            f"p99 {f(st.get('p99'), 2)} ms."]


def readme_policy(policy):
    slowest = slowest_policy_workload(policy)
    if not slowest:
        return []
    worst = slowest[0]
    return [f"- Policy core at 1,000 sessions, slowest workload ({worst['workload']}): p50 "
            f"{worst['median_ns'] / 1000:.2f} µs, p99 {worst['p99_ns'] / 1000:.2f} µs per decision."]


def readme_daemon(mod, base):
    added = added_daemon_memory(mod, base)
    if not added:
        return []
    L = [f"- Daemon: {added[0]:+.1f} MiB idle ({added[2]}), "
         f"{f(idle_wakeups(mod))} idle wake-ups per minute (stock {f(idle_wakeups(base))})."]
    ratios = cost_ratios(mod, base)
    if ratios:
        L.append("- Daemon CPU per event against stock's: " + ", ".join(
            f"{label} {ratio:.3f}×" for label, _, _, ratio in ratios)
            + (f"; during the churn the module held the daemon's loop past one graph cycle "
               f"{(mod.get('churn') or {}).get('slowDecisionLogLines')} times, and a probe's largest round trip to the "
               f"daemon was {loop_stall(mod):.1f} ms (stock {f(loop_stall(base))} ms)" if loop_stall(mod) is not None else "") + ".")
    return L


def readme_section(res, policy, wall):
    sy = systems(res)
    mod, base = sy.get("module") or {}, sy.get("baseline") or {}
    m = res["machine"]
    return "\n".join(
        ["<!-- bench:begin (generated by make bench: scripts/plot.py) -->", "## Benchmarks", "",
         f"[BENCHMARKS.md](BENCHMARKS.md) has every figure, with method, spread and plots "
         f"(`make bench`, {m['date'][:10]}, {m['cpuModel']}, {m['nproc']} cores; module vs stock "
         f"PipeWire 0.3.65 + WirePlumber 0.4.13 in the same run). Latest:", ""]
        + readme_headphones(mod, base) + readme_duck(mod) + readme_interrupt(mod) + readme_notify(mod)
        + readme_policy(policy) + readme_daemon(mod, base) + bench_generations.readme_lines(res)
        + ["", "![headphone loss](docs/bench/headphone-loss.png)", "<!-- bench:end -->"])


def update_readme(path, section):
    text = open(path, encoding="utf-8").read()
    pat = re.compile(r"<!-- bench:begin.*?<!-- bench:end -->", re.S)
    if pat.search(text):
        text = pat.sub(lambda _: section, text)
    else:
        marker = "\n## Building by hand"
        idx = text.find(marker)
        text = (text[:idx] + "\n" + section + "\n" + text[idx:]) if idx >= 0 else text.rstrip() + "\n\n" + section + "\n"
    open(path, "w", encoding="utf-8").write(text)


def optional_json(path):
    """The JSON document at `path`, or None when there is none or it cannot be read as JSON
    (the report then goes without its section)."""
    if not os.path.exists(path):
        return None
    try:
        return json.load(open(path, encoding="utf-8"))
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", default="bench-out/results.json")
    ap.add_argument("--policy", default="bench-out/policy.json")
    ap.add_argument("--footprint", default="bench-out/footprint.json")
    ap.add_argument("--out", default="docs/bench")
    ap.add_argument("--markdown", default="BENCHMARKS.md")
    ap.add_argument("--readme", default="README.md")
    ap.add_argument("--wall", type=float, default=None)
    a = ap.parse_args()
    res = json.load(open(a.results, encoding="utf-8"))
    policy = optional_json(a.policy)
    footprint = optional_json(a.footprint)
    os.makedirs(a.out, exist_ok=True)
    plots = {
        "headphones": plot_headphones(res, a.out),
        "duck": plot_envelope(res, a.out, "duck", "Ducking: the music's envelope through a 1 s navigation prompt",
                              "ducking.png", "prompt playing", -13.98),
        "interrupt": plot_envelope(res, a.out, "interrupt", "Interruption: the music's envelope through a 1 s phone call",
                                   "interruption.png", "call playing", None),
        "policy": plot_policy(policy, res, a.out),
        "daemon": plot_daemon(res, a.out),
    }
    md = build_markdown(res, policy, plots, a.wall, footprint)
    open(a.markdown, "w", encoding="utf-8").write(md)
    if a.readme and os.path.exists(a.readme):
        update_readme(a.readme, readme_section(res, policy, a.wall))
    print(f"wrote {a.markdown} and {', '.join(p for p in plots.values() if p)}")


if __name__ == "__main__":
    main()
