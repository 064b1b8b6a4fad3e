#!/usr/bin/python3
"""An MPRIS player for the tests and the bench: it plays FILE with a child pw-play
(--media-role Music, as a program that plays from a child process) and answers
org.mpris.MediaPlayer2.Player on the session bus as org.mpris.MediaPlayer2.NAME.

How it takes Pause (--pause):
  honour        stops its child and reports Paused; Play starts a new child.
  ignore        answers Pause at once and keeps playing (reports Playing).
  never-answer  never answers Pause: the caller's call times out; it keeps playing.

It prints "ready" once its name is owned and its child plays, and one line per
method call ("Pause", "Play", ...), so a test can count the calls it received.
"""
import argparse
import os
import signal
import subprocess
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

PLAYER = "org.mpris.MediaPlayer2.Player"
ROOT = "org.mpris.MediaPlayer2"
PROPS = "org.freedesktop.DBus.Properties"
PATH = "/org/mpris/MediaPlayer2"


def say(line):
    print(line, flush=True)


class Player(dbus.service.Object):
    def __init__(self, bus, args):
        super().__init__(bus, PATH)
        self.args = args
        self.child = None
        self.status = "Stopped"
        self.pending = []  # never-answer: the Pause calls left unanswered

    # The child pw-play.
    def start_child(self):
        if self.child is None or self.child.poll() is not None:
            self.child = subprocess.Popen(["pw-play", "--media-role", "Music", self.args.file],
                                          stdin=subprocess.DEVNULL)
        self.set_status("Playing")

    def stop_child(self):
        if self.child is not None and self.child.poll() is None:
            self.child.terminate()
            try:
                self.child.wait(5)
            except subprocess.TimeoutExpired:
                self.child.kill()
        self.child = None

    def set_status(self, status):
        if status == self.status:
            return
        self.status = status
        self.PropertiesChanged(PLAYER, {"PlaybackStatus": status}, [])
        say("status " + status)

    # org.mpris.MediaPlayer2.Player
    @dbus.service.method(PLAYER, in_signature="", out_signature="",
                         async_callbacks=("reply", "error"))
    def Pause(self, reply, error):
        say("Pause")
        if self.args.pause == "never-answer":
            self.pending.append(reply)
            return
        if self.args.pause == "honour":
            self.stop_child()
            self.set_status("Paused")
        reply()

    @dbus.service.method(PLAYER, in_signature="", out_signature="")
    def Play(self):
        say("Play")
        self.start_child()

    @dbus.service.method(PLAYER, in_signature="", out_signature="")
    def PlayPause(self):
        say("PlayPause")
        if self.status == "Playing":
            self.stop_child()
            self.set_status("Paused")
        else:
            self.start_child()

    @dbus.service.method(PLAYER, in_signature="", out_signature="")
    def Stop(self):
        say("Stop")
        self.stop_child()
        self.set_status("Stopped")

    # org.freedesktop.DBus.Properties
    def properties(self, interface):
        if interface == ROOT:
            return {"Identity": self.args.name, "CanQuit": False, "CanRaise": False,
                    "HasTrackList": False, "SupportedUriSchemes": dbus.Array([], "s"),
                    "SupportedMimeTypes": dbus.Array([], "s")}
        if interface == PLAYER:
            return {"PlaybackStatus": self.status, "CanPlay": True, "CanPause": True,
                    "CanControl": True, "CanGoNext": False, "CanGoPrevious": False,
                    "CanSeek": False, "Rate": 1.0, "Volume": 1.0,
                    "Metadata": dbus.Dictionary({}, "sv")}
        raise dbus.exceptions.DBusException("no interface " + interface,
                                            name="org.freedesktop.DBus.Error.UnknownInterface")

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.properties(interface)[name]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties(interface)

    @dbus.service.method(PROPS, in_signature="ssv", out_signature="")
    def Set(self, interface, name, value):
        pass

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--name", default="fixture", help="the bus name's last part")
    parser.add_argument("--pause", choices=["honour", "ignore", "never-answer"], default="honour")
    parser.add_argument("file", help="the sound file its child plays")
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    player = Player(bus, args)
    name = dbus.service.BusName(ROOT + "." + args.name, bus, do_not_queue=True)
    player.start_child()
    loop = GLib.MainLoop()

    def quit_(*_):
        player.stop_child()
        loop.quit()
        return GLib.SOURCE_REMOVE

    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, quit_)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGINT, quit_)
    say("ready " + name.get_name())
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
