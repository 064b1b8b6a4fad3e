"""The BENCHMARKS.md section that sets every measured system side by side: the
module and stock on PipeWire 0.3.65 + WirePlumber 0.4, the same on PipeWire 1.4 +
WirePlumber 0.5, and (when measured) WirePlumber 0.5's own role-based policy."""

ORDER = ["module", "baseline", "module-pw1.4", "baseline-pw1.4", "peer-pw1.4"]
RAMP_MS = 250.0
RATE = 48000.0


def _num(x):
    return x if isinstance(x, (int, float)) else None


def _fmt(x, digits=1):
    x = _num(x)
    return "—" if x is None else f"{x:,.{digits}f}"


def _median(stats):
    return _num((stats or {}).get("median"))


# ------------------------------------------------ figures of one system
# Each figure that BENCHMARKS.md and the README summary both show is computed by one
# of these (plot.py uses them for its tables and summary lines too).

def ok_trials(section):
    """The trials of a duck or interrupt section that ran (ok)."""
    return [t for t in (section or {}).get("trials") or [] if t.get("ok")]


def headphone_counts(system):
    """(trials without a leaked sample, trials, failed trials) over every client."""
    clients = system.get("headphoneLoss") or []
    return (sum(c.get("zeroLeakTrials", 0) for c in clients),
            sum(len(c.get("leakedSamples") or []) for c in clients),
            sum(c.get("failed", 0) for c in clients))


def leak_medians(system):
    """Each client's median leaked samples per trial (clients that have one)."""
    medians = [_median(c.get("leaked")) for c in system.get("headphoneLoss") or []]
    return [x for x in medians if x is not None]


def duck_reached(system):
    """(trials that reached the duck level, trials that ran, Stats of the time it took)."""
    d = system.get("duck") or {}
    return d.get("reachedCount", 0), len(ok_trials(d)), d.get("reachedMs") or {}


def largest_duck_step(system):
    """The largest level step (dB) of the music between consecutive blocks, down or up,
    over the trials that ran; None when none was measured."""
    steps = [_num(t.get(k)) for t in ok_trials(system.get("duck")) for k in ("stepDownDb", "stepUpDb")]
    steps = [s for s in steps if s is not None]
    return max(steps) if steps else None


def duck_level_error(system):
    """Stats of the ducked music's level minus the duck level (dB)."""
    return (system.get("duck") or {}).get("levelErrorDb") or {}


def call_pause(system):
    """(trials whose music paused for the call, trials that ran, Stats of the pause time)."""
    r = system.get("interrupt") or {}
    return r.get("pausedCount", 0), len(ok_trials(r)), r.get("pauseMs") or {}


def call_resume(system):
    """(trials whose music resumed after the call, trials that ran, Stats of the resume time)."""
    r = system.get("interrupt") or {}
    return r.get("resumedCount", 0), len(ok_trials(r)), r.get("resumeMs") or {}


# ------------------------------------------------ the side-by-side table

def headphone_cell(system):
    """'0/300 leaked; median 0 samples' over every client of the system."""
    clean, trials, _ = headphone_counts(system)
    if trials == 0:
        return "—"
    medians = leak_medians(system)
    worst = max(medians) if medians else None
    return f"{clean}/{trials} without a leak; median leak {_fmt(worst, 0)} samples (worst client)"


def duck_cells(system):
    reached, ran, reached_ms = duck_reached(system)
    if not ran:
        return ["—", "—", "—"]
    return [f"{reached}/{ran}, {_fmt(_median(reached_ms))} ms",
            _fmt(largest_duck_step(system), 2),
            _fmt(_median(duck_level_error(system)), 2)]


def interrupt_cells(system):
    paused, ran, pause_ms = call_pause(system)
    resumed, _, resume_ms = call_resume(system)
    if not ran:
        return ["—", "—"]
    return [f"{paused}/{ran}, {_fmt(_median(pause_ms))} ms",
            f"{resumed}/{ran}, {_fmt(_median(resume_ms))} ms"]


def section(res):
    """Markdown lines, or [] when only one PipeWire generation was measured."""
    by_name = {s["system"]: s for s in res.get("systems", [])}
    names = [n for n in ORDER if n in by_name] + [n for n in by_name if n not in ORDER]
    if not any(n.endswith("-pw1.4") for n in names):
        return []
    L = ["## Both PipeWire generations side by side", "",
         "Every system measured in this run, on the same machine and with the same scenarios as above. "
         "`-pw1.4` systems run PipeWire 1.4.2 + WirePlumber 0.5.8 from Debian's bookworm-backports packages, unpacked "
         "into a private tree (`scripts/pipewire-tree.sh`), with the module built against that tree's headers. "
         f"The duck target is the ramp ({RAMP_MS:.0f} ms) plus one graph cycle: "
         f"{RAMP_MS + 1024 / RATE * 1000:.0f} ms at a 1024-sample quantum, "
         f"{RAMP_MS + 2048 / RATE * 1000:.0f} ms at 2048; no step may exceed 3 dB.", "",
         "| system | headphone loss | duck reached | largest step (dB) | duck level error (dB) | call: music paused | call over: music resumed | sandbox |",
         "|---|---|---|---|---|---|---|---|"]
    for n in names:
        s = by_name[n]
        err = s.get("sandboxError")
        L.append(f"| {n} ({s.get('description', '')}) | {headphone_cell(s)} | "
                 + " | ".join(duck_cells(s)) + " | " + " | ".join(interrupt_cells(s))
                 + f" | {'not run: `' + err + '`' if err else 'ok'} |")
    L.append("")
    mod, base = by_name.get("module-pw1.4") or {}, by_name.get("baseline-pw1.4") or {}
    ml = [_median(c.get("leaked")) for c in mod.get("headphoneLoss") or []]
    bl = [_median(c.get("leaked")) for c in base.get("headphoneLoss") or []]
    if ml and bl and all(x is not None for x in ml + bl):
        L.append(f"On PipeWire 1.4 the module leaks a median of {_fmt(max(ml), 0)} samples per unplug where stock "
                 f"WirePlumber 0.5 leaks {_fmt(min(bl), 0)}–{_fmt(max(bl), 0)}.")
        L.append("")
    peer = by_name.get("peer-pw1.4") or {}
    if mod and peer and not peer.get("sandboxError"):
        pl = leak_medians(peer)
        pd, md = peer.get("duck") or {}, mod.get("duck") or {}
        paused, ran, _ = call_pause(mod)
        _, _, resume_ms = call_resume(mod)
        peer_paused, peer_ran, _ = call_pause(peer)
        L.append("Against WirePlumber 0.5's own role-based policy (`peer-pw1.4`), on the same PipeWire:")
        L.append("")
        L.append(f"- headphone loss: the module leaks a median of {_fmt(max(ml) if ml else None, 0)} samples per unplug, "
                 f"the role policy {_fmt(min(pl) if pl else None, 0)}–{_fmt(max(pl) if pl else None, 0)};")
        L.append(f"- duck: the music changes by {_fmt(_median(md.get('changeDuringPromptDb')), 1)} dB with the module "
                 f"(largest step {duck_cells(mod)[1]} dB) and by {_fmt(_median(pd.get('changeDuringPromptDb')), 1)} dB with "
                 f"the role policy (largest step {duck_cells(peer)[1]} dB);")
        L.append(f"- a call: the module pauses the music in {paused} of {ran} trials and resumes it "
                 f"{_fmt(_median(resume_ms))} ms after the call (of which 200 ms is the grace period that keeps "
                 f"multi-stream prompts from chattering); the role policy pauses it in {peer_paused} of "
                 f"{peer_ran} trials.")
        L.append("")
    return L


def readme_lines(res):
    """The README summary's lines for PipeWire 1.4 (none when it was not measured)."""
    by_name = {s["system"]: s for s in res.get("systems", [])}
    mod, base = by_name.get("module-pw1.4"), by_name.get("baseline-pw1.4")
    if not mod or mod.get("sandboxError"):
        return []
    out = [f"- On PipeWire 1.4 + WirePlumber 0.5: headphone loss {headphone_cell(mod)}"
           + (f" (stock: {headphone_cell(base)})" if base else "")
           + f"; duck reached {duck_cells(mod)[0]}, largest step {duck_cells(mod)[1]} dB;"
           + f" call: music paused {interrupt_cells(mod)[0]}, resumed {interrupt_cells(mod)[1]}."]
    return out


def faults_section(res):
    """The "Faults and hostile input" section: what clients did to the daemon through the
    module (the faults section of audio-session-bench), per system that loads it."""
    rows = [s for s in res.get("systems", []) if s.get("faults")]
    if not rows:
        return []
    L = ["## Faults and hostile input", "",
         "A client destroys the policy's `audio-session` metadata object three times (`pw-cli destroy`); then rounds of "
         "hostile clients (`Tests/Fixtures/stress-clients.c --rewrite 5`: 16 KiB values, 100 extra `audio.session.*` keys, "
         "500-entry option lists, 200 large unrelated keys; each client rewrites its declaration 5 times) connect, declare and "
         "disconnect. *Crashes*: the pipewire process of the sandbox exited. *Memory*: pipewire's RssAnon after each round; "
         "*growth* is the last round against the second (the first rounds warm the allocator up). *Clients per second*: "
         "hostile clients connected and answered per second of each round. The user's volume and WirePlumber's saved "
         "state across kill -9 of WirePlumber and of PipeWire mid-duck, and a call whose process is killed, are asserted "
         "by the integration tests (`FaultTests`): a changed volume fails the test run.", "",
         "| system | metadata destroyed / recreated | crashes | RssAnon per round (MiB) | growth, round 2 to last (MiB) | clients per second (median) | error |",
         "|---|---|---:|---|---:|---:|---|"]
    for s in rows:
        f = s["faults"]
        rss = f.get("rssAnonKiB") or []
        growth = (rss[-1] - rss[1]) / 1024 if len(rss) >= 3 else None
        cps = sorted(f.get("clientsPerSecond") or [])
        med = cps[len(cps) // 2] if cps else None
        L.append(f"| {s['system']} | {f.get('metadataDestroyed', 0)} / {f.get('metadataRecreated', 0)} | {f.get('crashes', 0)} | "
                 + ", ".join(f"{x / 1024:.1f}" for x in rss)
                 + f" | {_fmt(growth, 1)} | {_fmt(med, 0)} | {('`' + f['error'] + '`') if f.get('error') else ''} |")
    L.append("")
    return L
