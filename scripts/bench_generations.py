"""The BENCHMARKS.md sections that set every measured system side by side: the
module and stock on PipeWire 0.3.65 + WirePlumber 0.4, the same on PipeWire 1.4 +
WirePlumber 0.5.8 and on PipeWire 1.6 + WirePlumber 0.5.18, (when measured)
WirePlumber 0.5's own role-based policy, and the peer as users run it today:
WirePlumber 0.5.18's own MPRIS pause against the module on four kinds of player."""

ORDER = ["module", "baseline", "module-pw1.4", "baseline-pw1.4", "peer-pw1.4", "module-pw1.6", "baseline-pw1.6"]
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
    if not any(n.endswith("-pw1.4") or n.endswith("-pw1.6") for n in names):
        return []
    L = ["## Every PipeWire generation side by side", "",
         "Every system measured in this run, on the same machine and with the same scenarios as above. "
         "`-pw1.4` systems run PipeWire 1.4.2 + WirePlumber 0.5.8 from Debian's bookworm-backports packages, unpacked "
         "into a private tree (`scripts/pipewire-tree.sh`), with the module built against that tree's headers. "
         "`-pw1.6` systems run PipeWire 1.6.9 + WirePlumber 0.5.18 from a Debian sid root filesystem "
         "(`scripts/pipewire-rootfs.sh`), with the module built against its headers; `baseline-pw1.6` is WirePlumber "
         "0.5.18 as users run it today, its MPRIS pause on. "
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
    mod16, base16 = by_name.get("module-pw1.6") or {}, by_name.get("baseline-pw1.6") or {}
    ml16 = leak_medians(mod16)
    bl16 = leak_medians(base16)
    if ml16 and bl16:
        L.append(f"On PipeWire 1.6 the module leaks a median of {_fmt(max(ml16), 0)} samples per unplug where stock "
                 f"WirePlumber 0.5.18 leaks {_fmt(min(bl16), 0)}–{_fmt(max(bl16), 0)} with these clients, which speak no "
                 "MPRIS (its MPRIS pause reaches only MPRIS players: see the next section).")
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
                 f"{_fmt(_median(resume_ms))} ms after the call; the role policy pauses it in {peer_paused} of "
                 f"{peer_ran} trials and resumes it {_fmt(_median(call_resume(peer)[2]))} ms after.")
        L.append("")
    return L


def readme_lines(res):
    """The README summary's lines for PipeWire 1.4 and 1.6 (none for one not measured)."""
    by_name = {s["system"]: s for s in res.get("systems", [])}
    out = []
    for suffix, label in (("-pw1.4", "PipeWire 1.4 + WirePlumber 0.5.8"), ("-pw1.6", "PipeWire 1.6 + WirePlumber 0.5.18")):
        mod, base = by_name.get("module" + suffix), by_name.get("baseline" + suffix)
        if not mod or mod.get("sandboxError") or not (mod.get("headphoneLoss") or mod.get("duck")):
            continue
        out.append(f"- On {label}: headphone loss {headphone_cell(mod)}"
                   + (f" (stock: {headphone_cell(base)})" if base else "")
                   + f"; duck reached {duck_cells(mod)[0]}, largest step {duck_cells(mod)[1]} dB;"
                   + f" call: music paused {interrupt_cells(mod)[0]}, resumed {interrupt_cells(mod)[1]}.")
    out += peer_readme_lines(res)
    return out


# ------------------------------------------------ the peer as users run it today

PEER_KINDS = ["honours", "none", "ignores", "never-answers"]
PEER_KIND_WORDS = {"honours": "an MPRIS player that honours Pause", "none": "a program without MPRIS",
                   "ignores": "an MPRIS player that answers Pause and plays on",
                   "never-answers": "an MPRIS player that never answers Pause"}
SCENARIO_WORDS = {"headphones": "headphones sink removed", "bluetooth": "Bluetooth headset disconnected"}


def peer_rows(res):
    """{(system, scenario, player): row} of the peer section, over the systems that ran it."""
    out = {}
    for s in res.get("systems", []):
        for r in s.get("peerPause") or []:
            out[(s["system"], r.get("scenario"), r.get("player"))] = r
    return out


def _status(row):
    st = row.get("statusAfter") or {}
    return ", ".join(f"{k} {v}" for k, v in sorted(st.items())) or "—"


def _peer_cell(row):
    if not row:
        return "—"
    n = len(row.get("leakedSamples") or [])
    if n == 0:
        return f"not measured ({row.get('failed', 0)} failed)"
    first = _median(row.get("firstSoundMs"))
    cell = f"{row.get('zeroLeakTrials', 0)}/{n} clean, median {_fmt(_median(row.get('leaked')), 0)}"
    if first is not None:
        cell += f", first sound {_fmt(first, 0)} ms"
    return cell


def bluetooth_section(res):
    """The many-trial Bluetooth disconnect (the bluetooth section), module against stock."""
    measured = [(s["system"], s["bluetoothLoss"]) for s in res.get("systems", []) if s.get("bluetoothLoss")]
    if not measured:
        return []
    window = next((r.get("windowSeconds") for _, r in measured if r.get("windowSeconds")), None)
    L = ["## Bluetooth headset disconnect (R30, R35)", "",
         "A program without MPRIS (`pw-play --media-role Music`, 375 Hz) plays on the simulated Bluetooth headset "
         "(PipeWire's own bluez5 plugin against the sandbox's fake BlueZ), the default output; the headset disconnects "
         "(`Device1.Connected` false, its A2DP transport gone) and the plugin tears its nodes down. The speaker's "
         f"monitor is recorded for {_fmt(window, 1)} s from the disconnect; *leaked samples* are its non-zero samples "
         "(both channels). The module holds the stream from the moment the headset's sink goes, whether the headset "
         "is switching profile or gone, until the headset says which.", "",
         "| system | trials | without a leak | leaked samples per trial | first sound on the speaker (ms) | failed |",
         "|---|---:|---:|---|---|---:|"]
    for name, r in measured:
        n = len(r.get("leakedSamples") or [])
        first = r.get("firstSoundMs") or {}
        L.append(f"| {name} | {n} | {r.get('zeroLeakTrials', 0)} | {_fmt(_median(r.get('leaked')), 0)} "
                 f"({_fmt((r.get('leaked') or {}).get('p10'), 0)}–{_fmt((r.get('leaked') or {}).get('p90'), 0)}) | "
                 f"{_fmt(_median(first), 0)} | {r.get('failed', 0)} |")
    L.append("")
    errors = [f"- {name}: " + "; ".join(r.get("errors") or []) for name, r in measured if r.get("errors")]
    if errors:
        L += ["Failed trials:", ""] + errors + [""]
    return L


def peer_section(res):
    """The section on WirePlumber 0.5.18's own MPRIS pause against the module, or []."""
    rows = peer_rows(res)
    if not rows:
        return bluetooth_section(res)
    systems = [n for n in ("module-pw1.6", "baseline-pw1.6") if any(k[0] == n for k in rows)]
    window = next((r.get("windowSeconds") for r in rows.values() if r.get("windowSeconds")), None)
    L = ["## The peer as users run it today: WirePlumber 0.5.18's MPRIS pause", "",
         "WirePlumber 0.5.11 and later (`linking.pause-playback`, on by default) send MPRIS `Pause` to the players whose "
         "streams were on a removed device sink, and hold back relinking until they answer (3 s at most, a rescan 1 s "
         "later). Measured on the PipeWire 1.6 generation: `baseline-pw1.6` is WirePlumber 0.5.18 as shipped, "
         "`module-pw1.6` the same with the module and `pw-session agent` running, as its users run them. Each trial "
         "plays music (375 Hz) on the private output, then removes it: the headphones' null sink destroyed "
         "(`pw-cli destroy`), or the Bluetooth headset of the sandbox's simulated BlueZ disconnected (PipeWire's own "
         "bluez5 plugin tears its nodes down). The speaker's monitor is recorded for "
         f"{_fmt(window, 0)} s from the loss; *clean* trials put 0 non-zero samples on it; *median* is the median of "
         "non-zero samples per trial; *first sound* the median time from the loss to the first one (trials that "
         "leaked). The fixture players (`Tests/Fixtures/mpris-player.py`) play through a child `pw-play`, so the "
         "stream's process is the player's child, as with Chromium and Electron.", "",
         "| loss | player | " + " | ".join(f"{n}: samples on the speaker" for n in systems)
         + " | " + " | ".join(f"{n}: PlaybackStatus after" for n in systems) + " |",
         "|---|---|" + "---|" * (2 * len(systems))]
    players = []
    for k in rows:
        if k[2] not in players and k[1] != "setup":
            players.append(k[2])
    for scenario in ("headphones", "bluetooth"):
        for p in players:
            cells = [rows.get((n, scenario, p)) for n in systems]
            if not any(cells):
                continue
            L.append(f"| {SCENARIO_WORDS[scenario]} | {p} | " + " | ".join(_peer_cell(c) for c in cells) + " | "
                     + " | ".join(_status(c) if c else "—" for c in cells) + " |")
    L.append("")
    errors = [f"- {k[0]} {k[1]} {k[2]}: " + "; ".join(r.get("errors") or []) for k, r in rows.items() if r.get("errors")]
    if errors:
        L += ["Failed trials:", ""] + errors + [""]
    L += peer_summary(rows)
    return bluetooth_section(res) + L


def _kind_clean(rows, system, kind):
    """(clean trials, trials) for one kind of player on one system, over both losses."""
    clean = total = 0
    for (s, _, _), r in rows.items():
        if s == system and r.get("pauseKind") == kind:
            clean += r.get("zeroLeakTrials", 0)
            total += len(r.get("leakedSamples") or [])
    return clean, total


def peer_summary(rows):
    out = []
    for kind in PEER_KINDS:
        mc, mt = _kind_clean(rows, "module-pw1.6", kind)
        bc, bt = _kind_clean(rows, "baseline-pw1.6", kind)
        if mt == 0 and bt == 0:
            continue
        out.append(f"- {PEER_KIND_WORDS[kind]}: {mc}/{mt} trials clean with the module, {bc}/{bt} with WirePlumber "
                   "0.5.18 alone.")
    if not out:
        return []
    return ["Over both losses:", ""] + out + [""]


def peer_readme_lines(res):
    rows = peer_rows(res)
    if not rows:
        return []
    parts = []
    for kind in PEER_KINDS:
        mc, mt = _kind_clean(rows, "module-pw1.6", kind)
        bc, bt = _kind_clean(rows, "baseline-pw1.6", kind)
        if mt or bt:
            parts.append(f"{PEER_KIND_WORDS[kind]} {mc}/{mt} (WirePlumber 0.5.18 alone {bc}/{bt})")
    return ["- Against WirePlumber 0.5.18's own MPRIS pause, trials with 0 samples on the speaker after a removed "
            "sink or a Bluetooth disconnect: " + "; ".join(parts) + "."]


def faults_section(res):
    """The "Faults and hostile input" section: what clients did to the daemon through the
    module (the faults section of audio-session-bench), per system that loads it."""
    rows = [s for s in res.get("systems", []) if s.get("faults")]
    if not rows:
        return []
    L = ["## Faults and hostile input", "",
         "Each system takes this section on a daemon started for it, so that every daemon has the same history "
         "(started, then these rounds) whatever sections ran before. "
         "A client destroys the policy's `audio-session` metadata object three times (`pw-cli destroy`, systems with the "
         "module); then rounds of "
         "hostile clients (`Tests/Fixtures/stress-clients.c --rewrite 5`: 16 KiB values, 100 extra `audio.session.*` keys, "
         "500-entry option lists, 200 large unrelated keys; each client rewrites its declaration 5 times) connect, declare and "
         "disconnect. *Crashes*: the pipewire process of the sandbox exited. *Memory*: pipewire's RssAnon after each round; "
         "*growth* is the last round against the second (the first rounds warm the allocator up). *Clients per second*: "
         "hostile clients connected and answered per second of each round. *Alone*: pipewire's RssAnon once the rounds are "
         "over and WirePlumber and pipewire-pulse have been stopped too (every proxy they held is gone), settled. What one "
         "daemon keeps moves by several MiB from one daemon to the next, with or without the module, so each system takes "
         "the section on several daemons, each started for it, one after another: *alone* is their median, the figures "
         "in brackets each daemon's; the metadata counts and crashes add up over all the daemons, and the per-round memory, "
         "its growth and the clients per second are the first daemon's. The stock "
         "systems take the same rounds: their RssAnon is what the daemon keeps without the module under the same load. The user's volume and WirePlumber's saved "
         "state across kill -9 of WirePlumber and of PipeWire mid-duck, and a call whose process is killed, are asserted "
         "by the integration tests (`FaultTests`): a changed volume fails the test run.", "",
         "| system | metadata destroyed / recreated | crashes | RssAnon per round (MiB) | growth, round 2 to last (MiB) | alone (MiB) | clients per second (median) | error |",
         "|---|---|---:|---|---:|---:|---:|---|"]
    for s in rows:
        f = s["faults"]
        rss = f.get("rssAnonKiB") or []
        growth = (rss[-1] - rss[1]) / 1024 if len(rss) >= 3 else None
        cps = sorted(f.get("clientsPerSecond") or [])
        med = cps[len(cps) // 2] if cps else None
        L.append(f"| {s['system']} | {f.get('metadataDestroyed', 0)} / {f.get('metadataRecreated', 0)} | {f.get('crashes', 0)} | "
                 + ", ".join(f"{x / 1024:.1f}" for x in rss)
                 + f" | {_fmt(growth, 1)} | {_fmt(f['rssAnonAloneKiB'] / 1024 if f.get('rssAnonAloneKiB') else None, 1)}"
                 + (" (" + ", ".join(f"{x / 1024:.1f}" for x in f["rssAnonAloneEachKiB"]) + ")"
                    if len(f.get("rssAnonAloneEachKiB") or []) > 1 else "")
                 + f" | {_fmt(med, 0)} | {('`' + f['error'] + '`') if f.get('error') else ''} |")
    L.append("")
    return L
