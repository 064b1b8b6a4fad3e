#!/bin/sh
# Runs a SwiftPM command (`swift build ...`) with a deadline, and once more if it
# does not exit by then.
#
# Usage: scripts/swiftpm.sh SWIFT ARGS...
#
# SwiftPM 6.3 on Linux can stay behind after its work: seen once here, `swift build
# -c release --product AudioSessionC` had returned from main and sat for half an hour
# at no CPU, its main thread parked in libdispatch's signal wait, waiting for a
# dispatch thread that never ends. Nothing else would ever stop it: `make test` would
# wait forever. A build from scratch here takes under 15 minutes; the deadline is 30
# (SWIFTPM_DEADLINE_SECONDS, for tests), after which the command is stopped and run
# once more: a build that had finished is found done at once, one that had not goes on
# from where it was. Standard output is the command's own (for --show-bin-path).
set -u
deadline=${SWIFTPM_DEADLINE_SECONDS:-1800}
for attempt in 1 2; do
	# --foreground: the command stays in make's process group, so a Ctrl-C reaches it;
	# on the deadline only the command itself is stopped (a compiler job it started
	# finishes on its own).
	timeout --foreground --kill-after=10 "$deadline" "$@"
	status=$?
	# 124: timeout stopped it; 137: it had to be killed.
	if [ "$status" -ne 124 ] && [ "$status" -ne 137 ]; then
		exit "$status"
	fi
	echo "swiftpm.sh: '$*' did not exit within $deadline s (attempt $attempt of 2)" >&2
done
exit "$status"
