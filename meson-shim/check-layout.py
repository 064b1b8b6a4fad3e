#!/usr/bin/env python3
"""The module's hot functions must lie side by side.

meson.build links the module with its hot functions (hot-symbols.txt) laid out together, so
that a decision on cold caches touches few pages of code. The linker moves sections, not
functions: a listed name that lives in a large shared section (the static Swift standard
library compiles most of itself into one 1.6 MB section) drags that whole section into the
list's order and scatters every function after it. This fails when the listed functions
the module holds spread over more than twice their own size.

With --laid-out, MODULE is the module as lay-out-module.sh rewrote it from a profile of the
policy's decisions (PROFILE: one line per branch the profile saw, the function's name and
how often it ran). This fails when the module was not rewritten, or when the functions that
ran 99% of those branches spread over more than twice their own size.

Usage: check-layout.py MODULE HOT_SYMBOLS | check-layout.py --laid-out MODULE PROFILE
"""
import subprocess
import sys


def hottest(profile, share):
    """The hottest functions that together ran `share` of the profile's branches."""
    counts = {}
    with open(profile) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 2 and fields[1].isdigit():
                counts[fields[0]] = counts.get(fields[0], 0) + int(fields[1])
    total = sum(counts.values())
    out, seen = set(), 0
    for name, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        if seen >= share * total:
            break
        out.add(name)
        seen += count
    return out


def main():
    args = sys.argv[1:]
    laid_out = args[:1] == ["--laid-out"]
    if laid_out:
        args = args[1:]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    module, listing = args
    if laid_out:
        sections = subprocess.run(["readelf", "-SW", module], capture_output=True, text=True, check=True).stdout
        if ".note.bolt_info" not in sections:
            sys.exit(f"FAIL: {module} was not rewritten by llvm-bolt")
        wanted = hottest(listing, 0.99)
    else:
        with open(listing) as f:
            wanted = {line.strip() for line in f if line.strip()}
    out = subprocess.run(["nm", "-S", "--defined-only", module], capture_output=True, text=True, check=True).stdout
    copies, marks = {}, {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in "tT" and fields[3] in wanted:
            copies.setdefault(fields[3], []).append((int(fields[0], 16), int(fields[1], 16)))
        elif len(fields) >= 3 and fields[-1] in ("__hot_start", "__hot_end"):
            marks[fields[-1]] = int(fields[0], 16)
    # A local name can belong to several functions (the same outlined helper compiled into
    # two files); llvm-bolt moves the one the profile names into the text it lays out,
    # between __hot_start and __hot_end, and leaves the others where the link put them.
    hot = (marks.get("__hot_start", 0), marks.get("__hot_end", 0))
    found = {}
    for name, places in copies.items():
        inside = [p for p in places if hot[0] <= p[0] < hot[1]]
        found[name] = (inside or places)[0]
    if len(found) < len(wanted) // 2:
        sys.exit(f"FAIL: only {len(found)} of the {len(wanted)} listed functions are in {module}")
    start = min(a for a, _ in found.values())
    end = max(a + s for a, s in found.values())
    total = sum(s for _, s in found.values())
    span = end - start
    print(f"{len(found)} hot functions, {total // 1024} KiB of code, spread over {span // 1024} KiB")
    if span > 2 * total:
        far = sorted(found.items(), key=lambda kv: kv[1][0])
        gaps = sorted(((b[1][0] - (a[1][0] + a[1][1]), b[0]) for a, b in zip(far, far[1:])), reverse=True)[:3]
        for gap, name in gaps:
            print(f"  {gap // 1024} KiB of other code before {name}")
        sys.exit(f"FAIL: the hot functions of {module} are spread over {span // 1024} KiB, more than twice their size")


if __name__ == "__main__":
    main()
