#!/bin/sh
# Runs inside `pw-session sandbox` (see scripts/demo.sh): every pw-* tool here
# talks to the sandbox. Music ducks under a navigation prompt, pauses for a call
# and resumes, and pauses when the headphones are unplugged with nothing reaching
# the speaker. Levels are measured on the sinks' monitors with pw-record + sox;
# the policy's notifications are read from the `audio-session` metadata.
set -eu
work=$(mktemp -d)
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT INT TERM
t0=$(date +%s.%N)
say() { printf '\n[%6.2fs] %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$*"; }

sox -n -r 48000 -c 2 -b 16 "$work/music.wav" synth 120 sine 440 vol 0.5
sox -n -r 48000 -c 2 -b 16 "$work/prompt.wav" synth 2 sine 880 vol 0.5
sox -n -r 48000 -c 2 -b 16 "$work/call.wav" synth 2 sine 660 vol 0.5
sox -n -r 48000 -c 2 -b 16 "$work/podcast.wav" synth 3 sine 330 vol 0.3

# Every event the policy publishes, as it happens.
stdbuf -oL pw-metadata -n audio-session -m > "$work/events.txt" 2>&1 &
pids="$pids $!"
shown=0
events() {
  # New audio-session.event values since the last call, one line each.
  n=$(grep -c "key:'audio-session.event'" "$work/events.txt" || true)
  grep "key:'audio-session.event'" "$work/events.txt" | tail -n +"$((shown + 1))" |
    sed -n "s/.*value:'\(.*\)' type:.*/    event  \1/p" | cut -c1-160
  shown=$n
}

# The RMS level (dBFS) reaching a sink during the next 0.6 s, and its non-zero samples.
level() {
  rm -f "$work/m.wav"
  pw-record --target "$1" -P '{ stream.capture.sink=true }' --format s16 --rate 48000 --channels 2 "$work/m.wav" 2>/dev/null &
  r=$!
  sleep 0.8
  kill -INT $r; wait $r 2>/dev/null || true
  rms=$(sox "$work/m.wav" -n trim 0.2 stats 2>&1 | sed -n 's/^RMS lev dB *\([^ ]*\).*/\1/p')
  nz=$(sox "$work/m.wav" -t s16 - 2>/dev/null | od -An -v -td2 -w2 | awk '$1 != 0 { n++ } END { print n + 0 }')
  printf '    level  %-10s %7s dBFS   non-zero samples: %s\n' "$1" "$rms" "$nz"
}

wait_for() { # wait_for SECONDS COMMAND...: poll with a deadline
  deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "timed out: $*" >&2; exit 1; }
    sleep 0.05
  done
}
playing() { pw-metadata -n audio-session 2>/dev/null | grep "id:$1 " | grep -q '"playing":true'; }
paused() { pw-metadata -n audio-session 2>/dev/null | grep "id:$1 " | grep -q '"playing":false'; }
music_node() { pw-dump | jq -r '.[] | select(.type == "PipeWire:Interface:Node" and .info.props["media.role"] == "Music") | .id' | head -1; }

say "music: pw-play --media-role Music, on the headphones (the default output)"
pw-play --media-role Music "$work/music.wav" &
player=$!; pids="$pids $player"
wait_for 10 sh -c 'test -n "$(pw-dump | jq -r ".[] | select(.info.props[\"media.role\"] == \"Music\") | .id")"'
music=$(music_node)
wait_for 10 playing "$music"
events
level headphones

say "navigation prompt (media.role=Navigation) on the speaker: the music ducks (softVolumes, x0.2)"
pw-play --media-role Navigation --target speaker "$work/prompt.wav" &
prompt=$!
sleep 0.5
level headphones
wait $prompt
sleep 0.8
say "prompt over: the music is back at its level"
events
level headphones

say "phone call (media.role=Phone) on the speaker: the music pauses"
pw-play --media-role Phone --target speaker "$work/call.wav" &
call=$!
wait_for 10 paused "$music"
level headphones
wait $call
wait_for 10 playing "$music"
say "call over: the music resumes (interruption ended, shouldResume)"
events
level headphones

say "headphones unplugged (pw-cli destroy): the music pauses, nothing reaches the speaker"
rm -f "$work/speaker.wav"
pw-record --target speaker -P '{ stream.capture.sink=true }' --format s16 --rate 48000 --channels 2 "$work/speaker.wav" 2>/dev/null &
rec=$!
sleep 0.3
pw-cli destroy "$(pw-dump | jq -r '.[] | select(.info.props["node.name"] == "headphones") | .id')" >/dev/null
sleep 1
kill -INT $rec; wait $rec 2>/dev/null || true
nz=$(sox "$work/speaker.wav" -t s16 - 2>/dev/null | od -An -v -td2 -w2 | awk '$1 != 0 { n++ } END { print n + 0 }')
printf '    level  speaker    non-zero samples in the second after the unplug: %s\n' "$nz"
events
pw-metadata -n audio-session | grep "id:$music " | sed -n "s/.*value:'\(.*\)' type:.*/    state  \1/p" | cut -c1-200
kill $player 2>/dev/null || true
say "an application on the AudioSession library: pw-session play (a podcast, spokenAudio, now on the speaker) prints what it receives"
pw-session play --mode spokenAudio "$work/podcast.wav" > "$work/app.log" 2>&1 &
app=$!; pids="$pids $app"
deadline=$(( $(date +%s) + 10 ))
until grep -q playing "$work/app.log" 2>/dev/null; do
  [ "$(date +%s)" -lt "$deadline" ] || { echo "pw-session play did not start" >&2; cat "$work/app.log" >&2; exit 1; }
  sleep 0.1
done
say "pw-session interrupt --as call --duration 1.5: a declared playAndRecord/voiceChat session interrupts it"
pw-session interrupt --as call --duration 1.5 | sed 's/^/    call   /'
wait $app || true   # it plays to the end of the podcast, then exits
sed 's/^/    app    /' "$work/app.log"

say "done"
