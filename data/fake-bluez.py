#!/usr/bin/python3
"""A fake BlueZ for the sandbox: one adapter and one A2DP headset on a private system bus,
enough for PipeWire's own bluez5 plugin to make the headset's real device and nodes.

It owns org.bluez and exposes what the plugin reads: the object manager at "/", an adapter
(Adapter1, Media1) and a headset (Device1). When the plugin registers its media endpoints
(Media1.RegisterApplication), the fake reads them back and connects the headset's A2DP
stream: a MediaTransport1 object, then SetConfiguration on the plugin's SBC source endpoint.
Acquire hands over one end of a socket pair; the other end is read and thrown away.

The headset also speaks Hands-Free (HFP 1.7, as the hands-free unit) when asked: like
BlueZ, the fake hands the plugin's registered HFP audio gateway profile an RFCOMM channel
(Profile1.NewConnection, with one end of a socket pair instead of a kernel RFCOMM socket)
and, on the other end, sets up the service level connection as a headset does
(AT+BRSF, AT+CIND=?, AT+CIND?, AT+CMER; no codec negotiation, so CVSD). The plugin then
offers the headset-head-unit profile and makes its nodes when the profile is chosen. What
the fake cannot reach: the SCO audio link. The plugin opens it with a kernel Bluetooth
socket when an HFP node starts, which fails here, so an HFP node never carries sound.

The headset is paired but not connected when the fake starts. Tests drive it through
org.audiosession.FakeBluez on /org/bluez:
  Disconnect(s how)  how = "device": Device1.Connected false, then the transport and the
                           hands-free link go;
                           "transport": the A2DP transport goes, the device stays connected;
                           "gone": as "device", then the headset's objects are removed
                           (out of range, or removed from the adapter).
  Connect()          connect the headset's A2DP stream (again).
  ConnectHandsFree() connect the hands-free link too (after Connect).
  HandsFreeState()   "" (none), "connecting" or "connected" (service level connection up).
Run it with Debian's python3 (python3-dbus, python3-gi).
"""
import socket
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
OM = "org.freedesktop.DBus.ObjectManager"
PROPS = "org.freedesktop.DBus.Properties"
ADAPTER = "/org/bluez/hci0"
ADDRESS = "00:11:22:33:44:55"
DEVICE = ADAPTER + "/dev_" + ADDRESS.replace(":", "_")
A2DP_SOURCE = "0000110a-0000-1000-8000-00805f9b34fb"
A2DP_SINK = "0000110b-0000-1000-8000-00805f9b34fb"
AVRCP = "0000110e-0000-1000-8000-00805f9b34fb"
HFP_AG = "0000111f-0000-1000-8000-00805f9b34fb"
# SBC, 48 kHz joint stereo, 16 blocks, 8 subbands, loudness, bitpool 2..53.
SBC_CONFIGURATION = dbus.Array([dbus.Byte(b) for b in (0x11, 0x15, 2, 53)], signature="y")


def log(*args):
    print("fake-bluez:", *args, flush=True)


class Object(dbus.service.Object):
    """An object with properties per interface (Get, GetAll, PropertiesChanged)."""

    def __init__(self, bus, path, interfaces):
        super().__init__(bus, path)
        self.path = path
        self.interfaces = interfaces

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.interfaces[interface][name]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return dbus.Dictionary(self.interfaces.get(interface, {}), signature="sv")

    @dbus.service.method(PROPS, in_signature="ssv")
    def Set(self, interface, name, value):
        self.update(interface, {name: value})

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def update(self, interface, changed):
        self.interfaces[interface].update(changed)
        self.PropertiesChanged(interface, dbus.Dictionary(changed, signature="sv"), dbus.Array([], signature="s"))


class Root(dbus.service.Object):
    def __init__(self, bus, fake):
        super().__init__(bus, "/")
        self.fake = fake

    @dbus.service.method(OM, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {o.path: o.interfaces for o in self.fake.objects()}

    @dbus.service.signal(OM, signature="oa{sa{sv}}")
    def InterfacesAdded(self, path, interfaces):
        pass

    @dbus.service.signal(OM, signature="oas")
    def InterfacesRemoved(self, path, interfaces):
        pass


class Adapter(Object):
    def __init__(self, bus, fake):
        super().__init__(bus, ADAPTER, {
            "org.bluez.Adapter1": {
                "Address": "AA:BB:CC:DD:EE:FF", "AddressType": "public", "Name": "sandbox", "Alias": "sandbox",
                "Class": dbus.UInt32(0x6c0104), "Powered": True, "Discoverable": False, "Pairable": True,
                "Discovering": False, "UUIDs": dbus.Array([A2DP_SOURCE], signature="s"),
            },
            "org.bluez.Media1": {"SupportedUUIDs": dbus.Array([A2DP_SOURCE, A2DP_SINK], signature="s")},
        })
        self.fake = fake

    @dbus.service.method("org.bluez.Media1", in_signature="oa{sv}", sender_keyword="sender")
    def RegisterApplication(self, application, options, sender=None):
        log("RegisterApplication", sender, application)
        self.fake.application = (sender, str(application))
        GLib.idle_add(self.fake.read_endpoints)

    @dbus.service.method("org.bluez.Media1", in_signature="o")
    def UnregisterApplication(self, application):
        self.fake.application = None

    @dbus.service.method("org.bluez.Media1", in_signature="oa{sv}", sender_keyword="sender")
    def RegisterEndpoint(self, endpoint, properties, sender=None):
        log("RegisterEndpoint", sender, endpoint, properties.get("UUID"))
        self.fake.endpoints[str(endpoint)] = (sender, dict(properties))
        GLib.idle_add(self.fake.maybe_connect)

    @dbus.service.method("org.bluez.Media1", in_signature="o")
    def UnregisterEndpoint(self, endpoint):
        self.fake.endpoints.pop(str(endpoint), None)


class ProfileManager(dbus.service.Object):
    """ProfileManager1 on /org/bluez (the plugin registers HSP/HFP profiles) and the tests' controls.
    Listed by the object manager as BlueZ lists it: the plugin starts its HFP backend only then."""

    def __init__(self, bus, fake):
        super().__init__(bus, "/org/bluez")
        self.path = "/org/bluez"
        self.interfaces = {"org.bluez.ProfileManager1": {}}
        self.fake = fake

    @dbus.service.method("org.bluez.ProfileManager1", in_signature="osa{sv}", sender_keyword="sender")
    def RegisterProfile(self, profile, uuid, options, sender=None):
        log("RegisterProfile", sender, profile, uuid)
        self.fake.profiles[str(uuid).lower()] = (sender, str(profile))

    @dbus.service.method("org.bluez.ProfileManager1", in_signature="o")
    def UnregisterProfile(self, profile):
        pass

    @dbus.service.method("org.audiosession.FakeBluez", in_signature="s", async_callbacks=("reply", "error"))
    def Disconnect(self, how, reply, error):
        # Answered once the disconnection is complete ("gone": once the objects are removed).
        try:
            self.fake.disconnect(str(how), reply)
        except dbus.exceptions.DBusException as e:
            error(e)

    @dbus.service.method("org.audiosession.FakeBluez")
    def Connect(self):
        self.fake.connect_device()

    @dbus.service.method("org.audiosession.FakeBluez")
    def ConnectHandsFree(self):
        self.fake.connect_hands_free()

    @dbus.service.method("org.audiosession.FakeBluez", out_signature="s")
    def HandsFreeState(self):
        hf = self.fake.hands_free
        return "" if hf is None else ("connected" if hf.established else "connecting")

    @dbus.service.method("org.audiosession.FakeBluez", out_signature="s")
    def TransportState(self):
        return str(self.fake.transport.interfaces["org.bluez.MediaTransport1"]["State"]) if self.fake.transport else ""


class Device(Object):
    def __init__(self, bus):
        super().__init__(bus, DEVICE, {
            "org.bluez.Device1": {
                "Address": ADDRESS, "AddressType": "public", "Name": "Sandbox Headset", "Alias": "Sandbox Headset",
                "Icon": "audio-headset", "Class": dbus.UInt32(0x240404), "Appearance": dbus.UInt16(0),
                "Paired": True, "Bonded": True, "Trusted": True, "Blocked": False, "LegacyPairing": False,
                "Connected": False, "ServicesResolved": False, "WakeAllowed": False,
                "UUIDs": dbus.Array([A2DP_SINK, AVRCP], signature="s"),
                "Adapter": dbus.ObjectPath(ADAPTER), "Modalias": "bluetooth:v0000p0000d0000",
            },
        })


class RemoteEndpoint(Object):
    """The headset's SBC stream end point (BlueZ shows a remote SEP as MediaEndpoint1): the
    plugin configures the stream through it (choosing a codec), and BlueZ then makes the
    transport and calls the plugin's own endpoint with it."""

    def __init__(self, bus, fake):
        super().__init__(bus, DEVICE + "/sep1", {
            "org.bluez.MediaEndpoint1": {
                "UUID": A2DP_SINK, "Codec": dbus.Byte(0),
                # SBC: every rate and mode, every block length, subband count and allocation.
                "Capabilities": dbus.Array([dbus.Byte(b) for b in (0xff, 0xff, 2, 53)], signature="y"),
                "Device": dbus.ObjectPath(DEVICE), "DelayReporting": False,
            },
        })
        self.fake = fake

    @dbus.service.method("org.bluez.MediaEndpoint1", in_signature="oa{sv}", sender_keyword="sender")
    def SetConfiguration(self, endpoint, properties, sender=None):
        configuration = properties.get("Capabilities", SBC_CONFIGURATION)
        log("remote SetConfiguration", endpoint, list(bytes(configuration)))
        GLib.idle_add(self.fake.configure, sender, str(endpoint), dbus.Array(configuration, signature="y"))


class Transport(Object):
    def __init__(self, bus, path, fake, configuration=SBC_CONFIGURATION):
        super().__init__(bus, path, {
            "org.bluez.MediaTransport1": {
                # The UUID of the local endpoint's role, as BlueZ gives it: PipeWire is the source.
                "Device": dbus.ObjectPath(DEVICE), "UUID": A2DP_SOURCE, "Codec": dbus.Byte(0),
                "Configuration": configuration, "State": "idle", "Delay": dbus.UInt16(0),
                "Volume": dbus.UInt16(127),
            },
        })
        self.fake = fake
        self.peer = None
        self.watch = None

    def hand_over(self):
        self.close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.peer = ours
        self.watch = GLib.io_add_watch(ours.fileno(), GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR | GLib.IO_NVAL, self.drain)
        self.update("org.bluez.MediaTransport1", {"State": "active"})
        fd = dbus.types.UnixFd(theirs)
        theirs.close()
        return fd

    def drain(self, fd, condition):
        if self.peer is None or condition & (GLib.IO_HUP | GLib.IO_ERR | GLib.IO_NVAL):
            self.watch = None
            return False
        try:
            self.peer.recv(4096)
        except OSError:
            self.watch = None
            return False
        return True

    @dbus.service.method("org.bluez.MediaTransport1", out_signature="hqq")
    def Acquire(self):
        log("Acquire", self.path)
        return (self.hand_over(), dbus.UInt16(672), dbus.UInt16(672))

    @dbus.service.method("org.bluez.MediaTransport1", out_signature="hqq")
    def TryAcquire(self):
        log("TryAcquire", self.path)
        return (self.hand_over(), dbus.UInt16(672), dbus.UInt16(672))

    @dbus.service.method("org.bluez.MediaTransport1")
    def Release(self):
        log("Release", self.path)
        self.close()
        self.update("org.bluez.MediaTransport1", {"State": "idle"})

    def close(self):
        # The watch goes before the socket: a watch left on a closed descriptor makes the
        # main loop spin on POLLNVAL and answer the plugin late.
        if self.watch is not None:
            GLib.source_remove(self.watch)
            self.watch = None
        if self.peer is not None:
            self.peer.close()
            self.peer = None


class HandsFree:
    """The headset's end of an HFP RFCOMM channel: it sets up the service level connection
    with the plugin's audio gateway, one command at a time, each after the gateway's OK."""

    COMMANDS = ["AT+BRSF=0", "AT+CIND=?", "AT+CIND?", "AT+CMER=3,0,0,1"]

    def __init__(self, bus, sender, profile):
        # SEQPACKET keeps each command one message: PipeWire 0.3.65 reads one per read().
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.step = 0
        self.buffer = b""
        self.established = False
        self.sender, self.profile = sender, profile
        self.watch = GLib.io_add_watch(self.sock.fileno(), GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR | GLib.IO_NVAL,
                                       self.readable)
        bus.get_object(sender, profile, introspect=False).NewConnection(
            dbus.ObjectPath(DEVICE), dbus.types.UnixFd(theirs), dbus.Dictionary({}, signature="sv"),
            dbus_interface="org.bluez.Profile1",
            reply_handler=self.accepted, error_handler=lambda e: log("HFP NewConnection failed:", e))
        theirs.close()

    def accepted(self, *args):
        log("HFP NewConnection answered")
        self.send(self.COMMANDS[0])

    def send(self, command):
        if self.sock is not None:
            log("HF >", command)
            self.sock.send((command + "\r").encode())

    def readable(self, fd, condition):
        if self.sock is None:
            self.watch = None
            return False
        if condition & (GLib.IO_HUP | GLib.IO_ERR | GLib.IO_NVAL):
            log("HFP link closed by the gateway")
            self.watch = None
            self.close()
            return False
        try:
            data = self.sock.recv(1024)
        except OSError:
            return True
        if not data:
            self.watch = None
            self.close()
            return False
        self.buffer += data
        if self.step < len(self.COMMANDS) and (b"OK" in self.buffer or b"ERROR" in self.buffer):
            log("AG <", self.buffer.decode(errors="replace").strip().replace("\r\n", " | "))
            self.buffer = b""
            self.step += 1
            if self.step < len(self.COMMANDS):
                self.send(self.COMMANDS[self.step])
            else:
                self.established = True
                log("HFP service level connection established")
        elif self.step >= len(self.COMMANDS):
            self.buffer = b""
        return True

    def close(self, bus=None):
        if bus is not None and self.sock is not None:
            bus.get_object(self.sender, self.profile, introspect=False).RequestDisconnection(
                dbus.ObjectPath(DEVICE), dbus_interface="org.bluez.Profile1",
                reply_handler=lambda *a: None, error_handler=lambda e: log("RequestDisconnection failed:", e))
        if self.watch is not None:
            GLib.source_remove(self.watch)
            self.watch = None
        if self.sock is not None:
            self.sock.close()
            self.sock = None


class Fake:
    def __init__(self, bus):
        self.bus = bus
        self.root = Root(bus, self)
        self.adapter = Adapter(bus, self)
        self.manager = ProfileManager(bus, self)
        self.device = Device(bus)
        self.sep = RemoteEndpoint(bus, self)
        self.transport = None
        self.application = None
        self.wanted = False
        self.endpoints = {}
        self.serial = 0
        self.profiles = {}
        self.hands_free = None

    def objects(self):
        return [o for o in (self.manager, self.adapter, self.device, self.sep, self.transport) if o is not None]

    def read_endpoints(self):
        sender, path = self.application
        app = self.bus.get_object(sender, path)
        objects = app.GetManagedObjects(dbus_interface=OM)
        for p, interfaces in objects.items():
            e = interfaces.get("org.bluez.MediaEndpoint1")
            if e is not None:
                self.endpoints[str(p)] = (sender, dict(e))
        log("endpoints:", sorted((str(e[1].get("UUID")), int(e[1].get("Codec", -1)), p) for p, e in self.endpoints.items()))
        self.maybe_connect()
        return False

    def source_endpoint(self):
        for path, (sender, props) in sorted(self.endpoints.items()):
            if str(props.get("UUID", "")).lower() == A2DP_SOURCE and int(props.get("Codec", -1)) == 0:
                return sender, path
        return None

    def maybe_connect(self):
        # The headset connects when a test says so (Connect), once the plugin is there.
        if self.wanted and self.transport is None and self.source_endpoint() is not None:
            self.connect_device()
        return False

    def connect_device(self):
        self.wanted = True
        endpoint = self.source_endpoint()
        if endpoint is None:
            log("no SBC source endpoint registered yet")
            return
        if self.device is None:
            # Back in range: the device, then its stream end point, as BlueZ announces them.
            self.device = Device(self.bus)
            self.device.interfaces["org.bluez.Device1"].update({"Connected": True, "ServicesResolved": True})
            self.root.InterfacesAdded(DEVICE, self.device.interfaces)
            self.sep = RemoteEndpoint(self.bus, self)
            self.root.InterfacesAdded(self.sep.path, self.sep.interfaces)
        elif not self.device.interfaces["org.bluez.Device1"]["Connected"]:
            self.device.update("org.bluez.Device1", {"Connected": True, "ServicesResolved": True})
        if self.transport is not None:
            return
        self.serial += 1
        path = DEVICE + "/sep1/fd%d" % (self.serial - 1)
        self.transport = Transport(self.bus, path, self)
        self.root.InterfacesAdded(path, self.transport.interfaces)
        sender, endpoint_path = endpoint
        configuration = dict(self.transport.interfaces["org.bluez.MediaTransport1"])
        log("SetConfiguration", endpoint_path, path)
        self.bus.get_object(sender, endpoint_path, introspect=False).SetConfiguration(
            dbus.ObjectPath(path), dbus.Dictionary(configuration, signature="sv"),
            dbus_interface="org.bluez.MediaEndpoint1",
            reply_handler=lambda *a: log("SetConfiguration answered"),
            error_handler=lambda e: log("SetConfiguration failed:", e))

    def connect_hands_free(self):
        if self.hands_free is not None:
            return
        profile = self.profiles.get(HFP_AG)
        if profile is None:
            raise dbus.exceptions.DBusException("the plugin registered no HFP audio gateway profile")
        if self.device is None or not self.device.interfaces["org.bluez.Device1"]["Connected"]:
            raise dbus.exceptions.DBusException("the headset is not connected (Connect first)")
        self.hands_free = HandsFree(self.bus, *profile)

    def drop_hands_free(self):
        hf, self.hands_free = self.hands_free, None
        if hf is not None:
            hf.close(self.bus)

    def configure(self, sender, endpoint_path, configuration):
        """The plugin chose a configuration through the remote end point: a new transport."""
        self.remove_transport()
        self.serial += 1
        path = DEVICE + "/sep1/fd%d" % (self.serial - 1)
        self.transport = Transport(self.bus, path, self, configuration)
        self.root.InterfacesAdded(path, self.transport.interfaces)
        self.local_endpoint = (sender, endpoint_path)
        self.bus.get_object(sender, endpoint_path, introspect=False).SetConfiguration(
            dbus.ObjectPath(path), dbus.Dictionary(dict(self.transport.interfaces["org.bluez.MediaTransport1"]), signature="sv"),
            dbus_interface="org.bluez.MediaEndpoint1",
            reply_handler=lambda *a: log("SetConfiguration answered", endpoint_path),
            error_handler=lambda e: log("SetConfiguration failed:", e))
        return False

    def remove_transport(self):
        t, self.transport = self.transport, None
        if t is None:
            return
        t.close()
        self.root.InterfacesRemoved(t.path, dbus.Array(["org.bluez.MediaTransport1"], signature="s"))
        sender_endpoint = self.source_endpoint()
        if sender_endpoint is not None:
            sender, endpoint_path = sender_endpoint
            self.bus.get_object(sender, endpoint_path, introspect=False).ClearConfiguration(
                dbus.ObjectPath(t.path), dbus_interface="org.bluez.MediaEndpoint1",
                reply_handler=lambda *a: None, error_handler=lambda e: log("ClearConfiguration failed:", e))
        t.remove_from_connection()

    def remove_device_objects(self):
        """The headset's objects go (BlueZ forgot it, or it was removed)."""
        if self.sep is not None:
            self.root.InterfacesRemoved(self.sep.path, dbus.Array(["org.bluez.MediaEndpoint1"], signature="s"))
            self.sep.remove_from_connection()
            self.sep = None
        if self.device is not None:
            self.root.InterfacesRemoved(DEVICE, dbus.Array(["org.bluez.Device1"], signature="s"))
            self.device.remove_from_connection()
            self.device = None

    def disconnect(self, how, done=lambda: None):
        log("Disconnect", how)
        self.wanted = False
        if how == "device":
            self.device.update("org.bluez.Device1", {"Connected": False, "ServicesResolved": False})
            self.remove_transport()
            self.drop_hands_free()
        elif how == "transport":
            self.remove_transport()
        elif how == "gone":
            # As BlueZ does: the link drops (Connected false, the transport goes), and the
            # device's objects go a second later (BlueZ forgets a device it no longer sees
            # after a while). Removed at once with the transport, PipeWire 1.6.9's plugin
            # crashed WirePlumber in 3 of 5 runs (a use after free in libspa-bluez5), which
            # real BlueZ's order does not provoke.
            if self.device is not None:
                self.device.update("org.bluez.Device1", {"Connected": False, "ServicesResolved": False})
            self.drop_hands_free()
            self.remove_transport()

            def forget():
                self.remove_device_objects()
                done()
                return False

            GLib.timeout_add(1000, forget)
            return
        else:
            raise dbus.exceptions.DBusException("unknown way to disconnect: " + how)
        done()


def main():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    fake = Fake(bus)
    name = dbus.service.BusName(BLUEZ, bus)
    log("ready", name.get_name())
    GLib.MainLoop().run()


if __name__ == "__main__":
    sys.exit(main())
