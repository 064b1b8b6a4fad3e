#!/bin/sh
# Runs inside `pw-session sandbox`: every pw-* tool here talks to the sandbox.
set -eu
work=$(mktemp -d)
trap 'kill $player 2>/dev/null || true; rm -rf "$work"' EXIT
say() { printf '\n[%s] %s\n' "$(date +%T.%3N)" "$*"; }

sox -n -r 48000 -c 2 -b 16 "$work/tone.wav" synth 3 sine 440 vol 0.3

say "music: pw-play --media-role Music on the headphones (the default output)"
pw-play --media-role Music --target headphones "$work/tone.wav" &
player=$!

# Poll (with a deadline) until the module has published the stream's session.
deadline=$(( $(date +%s) + 10 ))
until pw-metadata -n audio-session 2>/dev/null | grep -q '"category"'; do
  [ "$(date +%s)" -lt "$deadline" ] || { echo "the module never published the stream" >&2; exit 1; }
  sleep 0.1
done

say "what the module knows (metadata 'audio-session', written only by the module):"
pw-metadata -n audio-session | sed -n 's/.*key:.\(audio-session[^'"'"']*\).*value:.\(.*\). type:.*/  \1 = \2/p'

wait $player
say "music ended"
