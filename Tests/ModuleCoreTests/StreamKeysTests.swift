import AudioSessionCoreABI
import AudioSessionVocabulary
import Foundation
import PipeWireFacts
import SessionPolicy
import Testing

/// A stream's properties cross the ABI only as far as anything of the stream is read from
/// them: the fifty-odd keys the daemon and the stream's library set (and any a program
/// adds) are never made strings, on every stream added and every change of its properties.
@Suite struct StreamKeysTests {
    let effects = RecordingEffectSink()

    /// What a stream of `pw-play` carries on PipeWire 0.3.65 besides what the policy reads.
    static let daemonKeys: KeyValuePairs<String, String> = [
        "media.type": "Audio", "media.category": "Playback", "media.class": "Stream/Output/Audio",
        "media.name": "song.wav", "node.name": "pw-play", "node.description": "pw-play",
        "node.autoconnect": "true", "node.want-driver": "true", "node.rate": "1/48000",
        "node.latency": "1024/48000", "node.loop.name": "data-loop.0", "node.driver-id": "35",
        "object.id": "71", "object.serial": "518", "object.register": "false", "client.id": "70",
        "factory.id": "7", "clock.quantum-limit": "8192", "library.name.audioconvert": "audioconvert/libspa-audioconvert",
        "adapt.follower.spa-node": "", "port.group": "stream.0", "stream.is-live": "true",
        "application.language": "en_US.UTF-8", "application.process.user": "root",
        "application.process.host": "debian", "application.process.session-id": "3",
        "window.x11.display": ":0", "core.version": "0.3.65", "core.name": "pipewire-root-4242",
        "pipewire.sec.pid": "4242", "pipewire.sec.uid": "0", "pipewire.sec.gid": "0",
        "media.roles": "Music", "stream.monitors": "true", "application.names": "other",
    ]

    /// Every key the stream's facts are read from, with values that make each count.
    static let readKeys: KeyValuePairs<String, String> = [
        PipeWireKey.applicationName: "player", PipeWireKey.processBinary: "mpv", PipeWireKey.processID: "4242",
        PipeWireKey.mediaRole: "Music", PipeWireKey.linkGroup: "group-1", PipeWireKey.captureSink: "true",
        PipeWireKey.monitor: "1", DeclarationKey.category: "playback", DeclarationKey.mode: "spokenAudio",
        DeclarationKey.options: "duckOthers", DeclarationKey.active: "true", DeclarationKey.activationRequest: "3",
        DeclarationKey.deactivation: DeclarationKey.notifyOthersOnDeactivation, DeclarationKey.outputOverride: "speaker",
        DeclarationKey.library: "1", DeclarationKey.prefersNoInterruptionsFromSystemAlerts: "true",
        DeclarationKey.prefersInterruptionOnRouteDisconnect: "false", DeclarationKey.controlPrefix + "mpris": "1=x",
    ]

    static func kept(_ props: Properties) -> Properties {
        props.filter { $0.key.withCString(Translation.readsStreamKey) }
    }

    @Test func everyKeyAStreamIsReadFromIsKept() {
        for key in Self.readKeys.map(\.key) + [DeclarationKey.prefix, DeclarationKey.prefix + "anything"] {
            #expect(key.withCString(Translation.readsStreamKey), "\(key)")
        }
    }

    @Test func keysNothingIsReadFromAreLeftOut() {
        let other = Self.daemonKeys.map(\.key) + [
            "", "a", "m", "n", "s", "audio", "audio.session", "audio.sessionx", "application.name.x",
            "application.process.id2", "media.role ", "node.link-groups", "stream.capture.sinks",
            "stream.monitor.x", "pipewire.access", "Media.role", String(repeating: "s", count: 16_384),
        ]
        for key in other {
            #expect(!key.withCString(Translation.readsStreamKey), "\(key.prefix(40))")
        }
    }

    /// The module's C side digests only the keys the core reads to tell whether a stream's
    /// properties changed (`as_core_reads_stream_key`, the list written out in C): the same
    /// answer as the core's own, key by key.
    @Test func theCSideKnowsTheKeysTheCoreReads() {
        let keys = Self.readKeys.map(\.key) + Self.daemonKeys.map(\.key) + [
            "", "a", "m", "n", "s", "audio", "audio.session", "audio.session.", "audio.sessionx", "application.name.x",
            "application.process.id2", "application.process", "media.role ", "media.rol", "node.link-group",
            "node.link-groups", "stream.capture.sinks", "stream.monitor.x", "stream.monitor", "pipewire.access",
            "Media.role", "node.driver-id", DeclarationKey.prefix + "anything", String(repeating: "s", count: 4096),
        ]
        for key in keys {
            #expect(key.withCString { as_core_reads_stream_key($0) } == key.withCString(Translation.readsStreamKey), "\(key.prefix(40))")
        }
        #expect(!as_core_reads_stream_key(nil))
    }

    /// The facts of a stream are the same from the keys kept as from all of them, for each
    /// read key alone among the daemon's and for all of them together.
    @Test func theKeysKeptGiveTheSameFacts() {
        let daemon = Properties(uniqueKeysWithValues: Self.daemonKeys.map { ($0.key, $0.value) })
        var sets: [Properties] = [daemon]
        for (key, value) in Self.readKeys { sets.append(daemon.merging([key: value]) { $1 }) }
        sets.append(daemon.merging(Self.readKeys.map { ($0.key, $0.value) }) { $1 })
        // A declaration the policy refuses (an unknown category) and one over the size limit.
        sets.append(daemon.merging([DeclarationKey.category: "loud"]) { $1 })
        sets.append(daemon.merging((0..<100).map { (DeclarationKey.prefix + "x\($0)", "v") }) { $1 })
        for props in sets {
            let kept = Self.kept(props)
            #expect(StreamFacts(pipeWire: kept) == StreamFacts(pipeWire: props), "\(kept)")
        }
    }

    /// Every effect, as recorded, in order.
    func calls() -> [String] { effects.calls.map { "\($0)" } }

    /// The same declared stream twice through the C entry points, once among the daemon's
    /// keys and 200 large keys of no meaning to the policy (added and rewritten): every
    /// effect, every publication among them, is the same.
    @Test func aStreamsOtherKeysChangeNothingItDeclaresOrPublishes() throws {
        func run(noise: Bool) throws -> [String] {
            effects.calls.removeAll()
            let core = try effects.newCore()
            defer { as_core_free(core) }
            CProps(["application.name": "player"]).with { as_core_client_added(core, 7, $0, nil) }
            var pairs: [(key: [UInt8]?, value: [UInt8]?)] = [
                (Array(PipeWireKey.applicationName.utf8), Array("player".utf8)),
                (Array(DeclarationKey.category.utf8), Array("playback".utf8)),
            ]
            if noise {
                pairs += Self.daemonKeys.map { (Array($0.key.utf8), Array($0.value.utf8)) }
                for i in 0..<200 { pairs.append((Array("x.noise.\(i)".utf8), Array(repeating: UInt8(ascii: "v"), count: 16_384))) }
            }
            CProps(pairs).with { as_core_stream_added(core, 70, 7, AS_STREAM_OUTPUT, $0) }
            as_core_stream_running(core, 70, true)
            pairs.append((Array(DeclarationKey.mode.utf8), Array("spokenAudio".utf8)))
            pairs.append((Array(PipeWireKey.mediaRole.utf8), Array("Music".utf8)))
            if noise { pairs.append((Array("x.noise.late".utf8), Array("changed".utf8))) }
            CProps(pairs).with { as_core_stream_changed(core, 70, $0) }
            as_core_flush(core)
            as_core_stream_removed(core, 70)
            return calls()
        }
        let plain = try run(noise: false)
        let noisy = try run(noise: true)
        #expect(plain.contains { $0.contains("spokenAudio") }, "\(plain)")
        #expect(noisy == plain)
    }
}
