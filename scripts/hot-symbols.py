#!/usr/bin/python3
"""Writes meson-shim/hot-symbols.txt: the functions of the module that the daemon runs for
its events, in the order the module's link lays them out (meson-shim/meson.build).

The daemon hands the module an event every few milliseconds at the most, with its own work
and its clients' in between, so every event finds the module's code cold: the fewer pages
and lines of code an event touches, the less it costs. The policy's own Swift functions are
laid out again after the link by llvm-bolt, from a profile of its decisions that the build
learns (meson-shim/lay-out-module.sh); what that profile cannot see stays where the link
put it. That is the C module's callbacks (the daemon calls them, the policy bench does not),
the Swift runtime's functions (retain, release, allocation: the bench calls its own copy in
libswiftCore.so) and the standard library's unspecialized code. This list lays those side
by side, first, hottest first; the functions the build's profile lays out again follow.

The profile is the daemon's own: a private headless PipeWire (`pw-session sandbox`) runs
the module built in build/meson, and perf samples the daemon while the benchmark's workloads
run against it (a stream paused and resumed, streams made and destroyed, a client's property
updates). Run it again after a change to the module's event paths: a stale list costs only
locality (the linker skips names it lists that no longer exist).

The linker moves sections, not functions. The static Swift libraries compile their local
functions into one large .text section per object (the standard library's is 1.6 MB): a name
listed from one of those would move that whole section to its place in the list, and every
function listed after it would land a megabyte and more away. Such names are left out.

Usage: scripts/hot-symbols.py [--build build/meson] [--seconds-per-workload N]
Needs perf (Debian: linux-perf), `make module` done, and a release audio-session-bench
(built here when missing).
"""

import argparse
import collections
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = "libpipewire-module-audio-session.so"


def say(text):
    print("hot-symbols: " + text, file=sys.stderr, flush=True)


def fail(text):
    say(text)
    sys.exit(1)


def run(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


class Sandbox:
    """`pw-session sandbox` without a command: it prints the variables that reach it and
    the daemons' pids, and runs until interrupted."""

    def __init__(self, pw_session, module_dir):
        self.proc = subprocess.Popen([pw_session, "sandbox", "--module-dir", module_dir],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.env = dict(os.environ)
        self.env.pop("PIPEWIRE_REMOTE", None)
        self.pid = None
        deadline = time.monotonic() + 60
        for line in self.proc.stdout:
            line = line.strip()
            if line.startswith("export ") and "=" in line:
                key, value = line[len("export "):].split("=", 1)
                self.env[key] = value
            elif line.startswith("# daemon pids:"):
                for word in line.split():
                    if word.startswith("pipewire="):
                        self.pid = int(word.split("=", 1)[1])
            elif line.startswith("# Press Ctrl-C"):
                break
            if time.monotonic() > deadline:
                break
        if self.pid is None:
            self.stop()
            fail("the sandbox did not start (run `pw-session sandbox --verbose` to see why)")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def wait_line(proc, word, timeout):
    """Whether the process printed a line holding `word` within `timeout` seconds (a helper
    that hangs, or dies, is given up on)."""
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    pending = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return False
        chunk = os.read(fd, 4096)
        if not chunk:
            return False
        pending += chunk
        *lines, pending = pending.split(b"\n")
        if any(word.encode() in line for line in lines):
            return True


def profile_workload(sandbox, name, command, start_file, out, timeout):
    """Runs one workload's helper (it prints READY, waits for `start_file`, prints DONE) with
    perf sampling the daemon in between; returns the perf data file."""
    helper = subprocess.Popen(command, env=sandbox.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        if not wait_line(helper, "READY", 30):
            fail(f"the {name} workload did not get ready")
        perf = subprocess.Popen(["perf", "record", "-q", "-F", "10000", "-p", str(sandbox.pid), "-o", out],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attaches before the workload starts
        open(start_file, "w").close()
        done = wait_line(helper, "DONE", timeout)
        perf.send_signal(signal.SIGINT)
        perf.wait()
        if not done:
            fail(f"the {name} workload did not finish within {timeout} s")
    finally:
        helper.kill()
        helper.wait()
    return out


def module_samples(data):
    """{function: samples} of the module's own code in one perf recording."""
    report = run(["perf", "report", "-i", data, "--no-children", "--no-demangle", "--dsos", MODULE,
                  "--sort", "sym", "-n", "--stdio"], cwd=os.path.dirname(data))
    out = {}
    for line in report.splitlines():
        fields = line.split()
        # "  12.34%  123  [.] symbol"
        if len(fields) >= 4 and fields[2] == "[.]" and fields[1].isdigit():
            out[fields[3]] = out.get(fields[3], 0) + int(fields[1])
    return out


def unmovable_names(work):
    """Functions of the static Swift libraries that live in a large shared .text section."""
    swiftc = shutil.which("swiftc")
    if swiftc is None:
        fail("swiftc is not on PATH")
    static = run([os.path.join(ROOT, "meson-shim", "swift-static-dir.sh"), swiftc]).strip()
    names = set()
    for lib in ("libswiftCore.a", "libswift_StringProcessing.a", "libswift_RegexParser.a"):
        d = os.path.join(work, lib)
        os.makedirs(d)
        subprocess.run(["ar", "x", os.path.join(static, lib)], cwd=d, check=True)
        for obj in os.listdir(d):
            path = os.path.join(d, obj)
            big = False
            for line in run(["objdump", "-h", path]).splitlines():
                fields = line.split()
                if len(fields) > 2 and fields[1] == ".text" and int(fields[2], 16) > 65536:
                    big = True
            if not big:
                continue
            for line in run(["objdump", "-t", path]).splitlines():
                fields = line.split()
                if ".text" in fields[:-1]:
                    names.add(fields[-1])
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "meson"), help="meson's build directory of the module")
    parser.add_argument("--seconds-per-workload", type=float, default=10, help="how long each workload runs")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    if shutil.which("perf") is None:
        fail("perf is missing (apt-get install linux-perf)")
    for f in (MODULE, "pw-session", "audio-session-prop-flood"):
        if not os.path.exists(os.path.join(build, f)):
            fail(f"{os.path.join(build, f)} is missing: run `make module` first")
    say("building the benchmark's helpers (release)")
    subprocess.run([os.path.join(ROOT, "scripts", "swiftpm.sh"), "swift", "build", "-c", "release",
                    "--product", "audio-session-bench"], cwd=ROOT, check=True, stdout=sys.stderr)
    bin_dir = run([os.path.join(ROOT, "scripts", "swiftpm.sh"), "swift", "build", "-c", "release",
                   "--show-bin-path"], cwd=ROOT).strip()
    bench = os.path.join(bin_dir, "audio-session-bench")
    flood = os.path.join(build, "audio-session-prop-flood")
    seconds = args.seconds_per_workload
    relaid = set()
    listing = os.path.join(build, "decision-profile.txt")
    if os.path.exists(listing):
        with open(listing) as f:
            relaid = {line.split()[0] for line in f if line.split()}
    else:
        say(f"{listing} is missing (the module is not laid out): every function is ranked by its samples alone")

    work = tempfile.mkdtemp(prefix="hot-symbols.")
    try:
        sandbox = Sandbox(os.path.join(build, "pw-session"), build)
        weights = collections.Counter()
        try:
            toggles = int(200 * seconds)
            workloads = [
                ("pause/resume", [bench, "helper", "toggle", str(toggles), "200"]),
                ("churn", [bench, "helper", "churn", str(seconds), "20", "20"]),
                ("activation updates", [flood, "activation", "20000"]),
                ("silent-mode updates", [flood, "silent", "4000"]),
            ]
            for i, (name, command) in enumerate(workloads):
                say(f"profiling the daemon: {name}")
                start = os.path.join(work, f"start-{i}")
                data = profile_workload(sandbox, name, command + [start], start, os.path.join(work, f"{i}.data"),
                                        timeout=seconds * 6 + 60)
                samples = module_samples(data)
                total = sum(samples.values())
                if total == 0:
                    fail(f"no sample of the module's code during {name}")
                # Each workload weighs the same, however many events it makes.
                for fn, n in samples.items():
                    weights[fn] += n / total
        finally:
            sandbox.stop()
        unmovable = unmovable_names(work)
        linked = os.path.join(build, "libpipewire-module-audio-session-linked.so")
        known = None
        if os.path.exists(linked):
            known = {line.split()[-1] for line in run(["nm", "--defined-only", linked]).splitlines() if line.split()}
        ranked = [fn for fn, _ in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))
                  if not fn.startswith("0x") and ".cold." not in fn and fn not in unmovable
                  and (known is None or fn in known)]
        # What the build's profile lays out again goes last: its place in the link matters
        # only when llvm-bolt is not there.
        first = [fn for fn in ranked if fn not in relaid]
        rest = [fn for fn in ranked if fn in relaid]
        out = os.path.join(ROOT, "meson-shim", "hot-symbols.txt")
        with open(out, "w") as f:
            f.write("".join(fn + "\n" for fn in first + rest))
        say(f"{len(first) + len(rest)} functions in meson-shim/hot-symbols.txt "
            f"({len(first)} the build's profile does not lay out, first)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
