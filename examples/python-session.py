#!/usr/bin/env python3
"""An audio session from Python through ctypes and libaudiosession (docs/c-api.md).

Declares a playback session, activates it, prints the current route, plays a tone and
prints every interruption and route change until the time is up:

    python3 python-session.py 30
"""
import ctypes
import math
import select
import sys
import time

lib = ctypes.CDLL("libaudiosession.so.0")

AS_CATEGORY_PLAYBACK = 2
AS_MODE_DEFAULT = 0
AS_INTERRUPTION_BEGAN = 0


class Port(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("uid", ctypes.c_char_p), ("type", ctypes.c_char_p)]


class Route(ctypes.Structure):
    _fields_ = [("n_outputs", ctypes.c_size_t), ("outputs", ctypes.POINTER(Port)),
                ("n_inputs", ctypes.c_size_t), ("inputs", ctypes.POINTER(Port))]


INTERRUPTION = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_bool)
ROUTE_CHANGE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(Route))
HINT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_bool)
PLAIN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
RENDER = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.c_uint32, ctypes.c_uint32)


class Callbacks(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("interruption", INTERRUPTION), ("route_change", ROUTE_CHANGE),
                ("silence_secondary_audio_hint", HINT), ("media_services_lost", PLAIN),
                ("media_services_reset", PLAIN)]


lib.as_session_new.restype = ctypes.c_void_p
lib.as_session_new.argtypes = [ctypes.c_char_p]
lib.as_session_free.argtypes = [ctypes.c_void_p]
lib.as_session_set_category.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_uint32]
lib.as_session_set_active.argtypes = [ctypes.c_void_p, ctypes.c_bool, ctypes.c_uint32]
lib.as_session_last_error.restype = ctypes.c_char_p
lib.as_session_last_error.argtypes = [ctypes.c_void_p]
lib.as_session_set_callbacks.argtypes = [ctypes.c_void_p, ctypes.POINTER(Callbacks), ctypes.c_void_p]
lib.as_session_get_fd.argtypes = [ctypes.c_void_p]
lib.as_session_dispatch.argtypes = [ctypes.c_void_p]
lib.as_session_copy_current_route.restype = ctypes.POINTER(Route)
lib.as_session_copy_current_route.argtypes = [ctypes.c_void_p]
lib.as_route_free.argtypes = [ctypes.POINTER(Route)]
lib.as_output_new.restype = ctypes.c_void_p
lib.as_output_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_bool,
                              RENDER, ctypes.c_void_p]
lib.as_output_set_paused.argtypes = [ctypes.c_void_p, ctypes.c_bool]
lib.as_output_free.argtypes = [ctypes.c_void_p]
for f in ("as_error_name", "as_interruption_reason_name", "as_route_change_reason_name"):
    getattr(lib, f).restype = ctypes.c_char_p


def say(line):
    print(line, flush=True)


session = lib.as_session_new(b"python-session")
res = lib.as_session_set_category(session, AS_CATEGORY_PLAYBACK, AS_MODE_DEFAULT, 0)
if res < 0:
    sys.exit(f"python-session: {lib.as_error_name(res).decode()}: {lib.as_session_last_error(session).decode()}")

output = None


def on_interruption(_data, kind, reason, should_resume):
    if kind == AS_INTERRUPTION_BEGAN:
        say(f"interruption began ({lib.as_interruption_reason_name(reason).decode()})")
        lib.as_output_set_paused(output, True)
    else:
        say(f"interruption ended ({'shouldResume' if should_resume else 'do not resume'})")
        if should_resume:
            lib.as_output_set_paused(output, False)
            say("resumed")


def on_route_change(_data, reason, previous):
    p = previous.contents
    was = p.outputs[0].type.decode() if p.n_outputs else "none"
    say(f"route change {lib.as_route_change_reason_name(reason).decode()} (previous output: {was})")


phase = [0.0]


def render(_data, buffer, frames, channels):
    # PipeWire's realtime thread; a real program would fill this from a ring buffer.
    for i in range(frames):
        v = 0.2 * math.sin(phase[0])
        phase[0] = (phase[0] + 2 * math.pi * 440 / 48000) % (2 * math.pi)
        for c in range(channels):
            buffer[i * channels + c] = v
    return frames


# Keep the ctypes callbacks alive as long as the session.
callbacks = Callbacks(1, INTERRUPTION(on_interruption), ROUTE_CHANGE(on_route_change),
                      HINT(0), PLAIN(0), PLAIN(0))
render_fn = RENDER(render)
lib.as_session_set_callbacks(session, ctypes.byref(callbacks), None)

res = lib.as_session_set_active(session, True, 0)
if res < 0:
    sys.exit(f"python-session: cannot activate: {lib.as_error_name(res).decode()}: "
             f"{lib.as_session_last_error(session).decode()}")
route = lib.as_session_copy_current_route(session)
outputs = [route.contents.outputs[i].type.decode() for i in range(route.contents.n_outputs)]
lib.as_route_free(route)
say(f"activated (output: {', '.join(outputs) or 'none'})")

output = lib.as_output_new(session, b"python-session tone", 48000, 2, False, render_fn, None)
say("playing")
fd = lib.as_session_get_fd(session)
end = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 30)
while time.monotonic() < end:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if ready:
        lib.as_session_dispatch(session)
lib.as_output_free(output)
lib.as_session_free(session)
say("done")
