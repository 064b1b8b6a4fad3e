import AudioSessionCoreABI
import AudioSessionVocabulary
import Foundation
import PipeWireFacts
import Testing

/// A client's properties cross the ABI only as far as anything of the client is read from
/// them: the rest (a client may carry hundreds of keys, some large) is never made a string.
@Suite struct ClientKeysTests {
    let effects = RecordingEffectSink()

    @Test func everyKeyAClientIsReadFromIsKept() {
        let read = [
            PipeWireKey.applicationName, PipeWireKey.processBinary, PipeWireKey.processID, PipeWireKey.access,
            DeclarationKey.prefix + "category", DeclarationKey.prefix + "activation-request",
            DeclarationKey.controlPrefix + "silent-mode", DeclarationKey.prefix,
        ]
        for key in read {
            #expect(key.withCString(Translation.readsClientKey), "\(key)")
        }
    }

    @Test func aRequestIsReadFromTheControlKeysAndTheAccessAlone() {
        for key in [DeclarationKey.controlPrefix + "silent-mode", DeclarationKey.controlPrefix + "mpris", PipeWireKey.access] {
            #expect(key.withCString(Translation.isRequestKey), "\(key)")
        }
        for key in ["", "a", DeclarationKey.prefix + "category", "audio.session.control", "pipewire.access.x", PipeWireKey.applicationName] {
            #expect(!key.withCString(Translation.isRequestKey), "\(key)")
        }
    }

    @Test func keysNothingIsReadFromAreLeftOut() {
        let other = [
            "", "a", "p", "audio", "audio.session", "audio.sessionx", "audio.sessio.", "application",
            "application.name.x", "application.names", "application.process", "application.process.id2",
            "application.icon-name", "pipewire.access.x", "pipewire.acces", "pipewire.sec.pid", "media.role",
            "media.class", "node.name", "core.name", "Audio.session.category", String(repeating: "a", count: 16_384),
        ]
        for key in other {
            #expect(!key.withCString(Translation.readsClientKey), "\(key.prefix(40))")
        }
    }

    /// Every metadata write, as written (subject, key and JSON text), in order.
    func writes() -> [String] {
        effects.calls.compactMap {
            guard case .publish(let subject, let key, _, let value) = $0 else { return nil }
            return "\(subject) \(key) \(value ?? "-")"
        }
    }

    /// The same client twice, once with 200 large keys of no meaning to the policy (added and
    /// rewritten): everything it declares and everything published is the same.
    @Test func aClientsOtherKeysChangeNothingItDeclaresOrPublishes() throws {
        func run(noise: Bool) throws -> [String] {
            effects.calls.removeAll()
            let core = try effects.newCore()
            defer { as_core_free(core) }
            var pairs: [(key: [UInt8]?, value: [UInt8]?)] = [
                (Array("application.name".utf8), Array("player".utf8)),
                (Array("application.process.id".utf8), Array("4242".utf8)),
                (Array("audio.session.category".utf8), Array("playback".utf8)),
            ]
            if noise {
                for i in 0..<200 { pairs.append((Array("x.noise.\(i)".utf8), Array(repeating: UInt8(ascii: "v"), count: 16_384))) }
            }
            let client = CProps(pairs)
            var identity = as_client_identity(executable: nil, app_id: nil, uid: 1000, access: nil, flatpak: false,
                                              core_access: 1, access_from_daemon: true)
            client.with { as_core_client_added(core, 7, $0, &identity) }
            CProps(["media.role": "Music"]).with { as_core_stream_added(core, 70, 7, AS_STREAM_OUTPUT, $0) }
            as_core_stream_running(core, 70, true)
            pairs.append((Array("audio.session.active".utf8), Array("true".utf8)))
            if noise { pairs.append((Array("x.noise.late".utf8), Array("changed".utf8))) }
            CProps(pairs).with { as_core_client_changed(core, 7, $0) }
            as_core_flush(core)
            return writes()
        }
        let plain = try run(noise: false)
        let noisy = try run(noise: true)
        #expect(!plain.isEmpty)
        #expect(plain.contains { $0.contains("\"playback\"") }, "\(plain)")
        #expect(noisy == plain)
    }
}
