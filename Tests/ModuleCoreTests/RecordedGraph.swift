import SessionPolicy
import PipeWireFacts

/// Properties of graph objects as PipeWire 0.3.65 set them, copied from `pw-dump`
/// in the sandbox (`pw-session sandbox -- sh -c 'pw-play --media-role Music x.wav &
/// sleep 1; pw-dump'`, then a second `pw-play --media-role Phone`). Ids are the ones
/// that dump had.
enum Recorded {
    static let speakerID: UInt32 = 43
    static let headphonesID: UInt32 = 38
    static let musicClientID: UInt32 = 39
    static let musicStreamID: UInt32 = 48
    static let musicLinks: [UInt32] = [51, 52]
    static let phoneClientID: UInt32 = 53
    static let phoneStreamID: UInt32 = 54
    static let phoneLinks: [UInt32] = [57, 58]

    /// The daemon's own client and WirePlumber's: present before anything plays.
    static let daemonClient: Properties = [
        "application.name": "pipewire", "object.id": "32", "pipewire.access": "unrestricted",
        "pipewire.protocol": "protocol-native", "core.version": "0.3.65",
    ]
    static let wireplumberClient: Properties = [
        "application.name": "WirePlumber", "application.process.binary": "wireplumber",
        "object.id": "34", "pipewire.access": "unrestricted", "pipewire.protocol": "protocol-native",
        "core.version": "0.3.65",
    ]

    static func nullSink(name: String, description: String, formFactor: String, priority: Int, id: UInt32, serial: Int)
        -> Properties
    {
        [
            "audio.adapt.follower": "", "audio.position": "[FL FR]", "clock.quantum-limit": "8192",
            "device.form-factor": formFactor, "factory.id": "17", "factory.mode": "merge",
            "factory.name": "support.null-audio-sink", "library.name": "audioconvert/libspa-audioconvert",
            "media.class": "Audio/Sink", "node.description": description, "node.driver": "true",
            "node.name": name, "object.id": String(id), "object.linger": "true",
            "object.serial": String(serial), "priority.session": String(priority),
        ]
    }

    static let speaker = nullSink(
        name: "speaker", description: "Speaker", formFactor: "internal", priority: 1000, id: speakerID, serial: 46)
    static let headphones = nullSink(
        name: "headphones", description: "Headphones", formFactor: "headphones", priority: 2000, id: headphonesID,
        serial: 53)

    /// pw-cat's client (pw-play) as the daemon has it.
    static func pwCatClient(id: UInt32, pid: Int, serial: Int) -> Properties {
        [
            "application.language": "C.UTF-8", "application.name": "pw-cat",
            "application.process.binary": "pw-cat", "application.process.host": "vm",
            "application.process.id": String(pid), "application.process.user": "root",
            "clock.power-of-two-quantum": "true", "config.name": "client-rt.conf",
            "core.name": "pipewire-root-\(pid)", "core.version": "0.3.65", "cpu.max-align": "32",
            "default.clock.max-quantum": "2048", "default.clock.min-quantum": "32",
            "default.clock.quantum": "1024", "default.clock.quantum-limit": "8192",
            "default.clock.rate": "48000", "link.max-buffers": "64", "log.level": "0",
            "mem.allow-mlock": "true", "mem.warn-mlock": "false", "module.id": "1",
            "object.id": String(id), "object.serial": String(serial), "pipewire.access": "unrestricted",
            "pipewire.protocol": "protocol-native", "pipewire.sec.gid": "0", "pipewire.sec.pid": String(pid),
            "pipewire.sec.uid": "0",
        ]
    }

    /// A pw-play stream node (`pw-play --media-role <role> /tmp/x.wav`).
    static func pwPlayStream(id: UInt32, client: UInt32, role: String, serial: Int) -> Properties {
        [
            "adapt.follower.spa-node": "", "application.name": "pw-play", "audio.adapt.follower": "",
            "client.id": String(client), "clock.quantum-limit": "8192", "factory.id": "7",
            "factory.mode": "split", "library.name": "audioconvert/libspa-audioconvert",
            "media.category": "Playback", "media.class": "Stream/Output/Audio",
            "media.filename": "/tmp/x.wav", "media.format": "WAVEX (Microsoft)", "media.name": "/tmp/x.wav",
            "media.role": role, "media.type": "Audio", "node.autoconnect": "true",
            "node.latency": "4800/48000", "node.name": "pw-play", "node.rate": "1/48000",
            "node.want-driver": "true", "object.id": String(id), "object.register": "false",
            "object.serial": String(serial), "stream.is-live": "true",
        ]
    }

    static let musicClient = pwCatClient(id: musicClientID, pid: 16266, serial: 61)
    static let musicStream = pwPlayStream(id: musicStreamID, client: musicClientID, role: "Music", serial: 62)
    static let phoneClient = pwCatClient(id: phoneClientID, pid: 16284, serial: 68)
    static let phoneStream = pwPlayStream(id: phoneStreamID, client: phoneClientID, role: "Phone", serial: 69)

    /// The sandbox before anything plays: daemon and WirePlumber clients, two sinks.
    static let idleGraph: [Event] = [
        .clientAdded(ClientID(32), daemonClient),
        .clientAdded(ClientID(34), wireplumberClient),
        .endpointAdded(NodeID(speakerID), kind: .sink, speaker),
        .endpointAdded(NodeID(headphonesID), kind: .sink, headphones),
    ]

    /// pw-play connects, its stream appears, WirePlumber links it (FL, FR) to the
    /// default sink (the headphones) and the stream starts running.
    static func play(client: UInt32, _ clientProps: Properties, stream: UInt32, _ streamProps: Properties,
                     links: [UInt32], sink: UInt32) -> [Event] {
        [.clientAdded(ClientID(client), clientProps),
         .streamAdded(NodeID(stream), client: ClientID(client), direction: .output, streamProps)]
            + links.map { .linkAdded(LinkID($0), output: NodeID(stream), input: NodeID(sink)) }
            + [.streamRunning(NodeID(stream), true)]
    }

    /// `pw-play --media-role <role>` as `play` records it: its client and stream as pw-cat
    /// makes them.
    static func pwPlay(client: UInt32, pid: Int, clientSerial: Int, stream: UInt32, role: String, streamSerial: Int,
                       links: [UInt32], sink: UInt32) -> [Event] {
        play(client: client, pwCatClient(id: client, pid: pid, serial: clientSerial), stream: stream,
             pwPlayStream(id: stream, client: client, role: role, serial: streamSerial), links: links, sink: sink)
    }

    static let musicPlays = play(
        client: musicClientID, musicClient, stream: musicStreamID, musicStream, links: musicLinks, sink: headphonesID)
    static let phonePlays = play(
        client: phoneClientID, phoneClient, stream: phoneStreamID, phoneStream, links: phoneLinks, sink: headphonesID)

    /// `pw-cli destroy` of the headphones: the node's destroy hook runs while its
    /// links still exist, then the links go.
    static let headphonesRemoved: [Event] =
        [.endpointRemoved(NodeID(headphonesID))]
        + (musicLinks + phoneLinks).map { .linkRemoved(LinkID($0)) }
}
