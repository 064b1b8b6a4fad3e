import AudioSessionCoreABI
import enum AudioSessionModuleCore.LogLevel
import Foundation
import Testing

/// The @_cdecl entry points, called through the C header like the module calls them.
@Suite struct CABITests {
    let effects = RecordingEffectSink()

    func newCore(_ args: CProps? = nil) throws -> OpaquePointer {
        var table = recordingTable
        let data = Unmanaged.passUnretained(effects).toOpaque()
        var error = [CChar](repeating: 0, count: 256)
        let core: OpaquePointer? = error.withUnsafeMutableBufferPointer { e in
            withUnsafePointer(to: &table) { t in
                if let args {
                    return args.with { AudioSessionCoreABI.as_core_new($0, t, data, e.baseAddress, e.count) }
                }
                return AudioSessionCoreABI.as_core_new(nil, t, data, e.baseAddress, e.count)
            }
        }
        let message = String(terminated: error)
        return try #require(core, "as_core_new failed: \(message)")
    }

    /// The priority last published for each session subject.
    func publishedPriorities() -> [UInt32: String] {
        Dictionary(effects.calls.metadataWrites.compactMap { w -> (UInt32, String)? in
            guard w.key == "audio-session.session", let p = w.value?["priority"] as? String else { return nil }
            return (w.subject, p)
        }, uniquingKeysWith: { $1 })
    }

    /// Stream ids the core heard of as streams (through `as_core_stream_added`).
    func expectEffectsNameOnly(streams known: Set<UInt32>, clients: Set<UInt32> = []) {
        for call in effects.calls {
            switch call {
            case .pause(let n), .resume(let n), .duck(let n, _, _), .fade(let n, _, _), .silence(let n, _), .listen(let n, _):
                #expect(known.contains(n), "effect on unknown node: \(call)")
            case .publish(let subject, let key, let type, let value):
                #expect(subject == 0 || known.contains(subject) || clients.contains(subject), "\(call)")
                #expect(["audio-session.event", "audio-session.global", "audio-session.session"].contains(key))
                #expect(type == "Spa:String:JSON")
                if let value {
                    #expect((try? JSONSerialization.jsonObject(with: Data(value.utf8))) is [String: Any], "\(value)")
                }
            case .log:
                break
            }
        }
    }

    /// A metadata object created anew (a client destroyed the old one) starts empty:
    /// `as_core_republish` writes the global state and every published session again.
    @Test func republishWritesTheGlobalStateAndEverySessionAgain() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        CProps(["media.role": "Music"]).with { as_core_stream_added(core, 10, 5, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 10, true)
        CProps(["audio.session.category": "playback"]).with { as_core_client_added(core, 6, $0, nil) }
        func published() -> [String: String] {
            var out: [String: String] = [:]
            for case .publish(let subject, let key, _, let value?) in effects.calls where key != "audio-session.event" {
                out["\(subject) \(key)"] = value
            }
            return out
        }
        let before = published()
        #expect(before.keys.sorted() == ["0 audio-session.global", "10 audio-session.session", "6 audio-session.session"])
        effects.calls = []
        as_core_republish(core)
        #expect(published() == before)
        as_core_republish(nil)
    }

    /// The identity the module reads from the daemon reaches the policy; odd values
    /// (no executable, uid -1 or beyond 32 bits) mean "unknown", never a trap.
    @Test func aClientsIdentityCrossesTheABIAndDecidesCallPriority() throws {
        let core = try newCore(CProps(["call.allowed-applications": "[ /usr/bin/linphone ]"]))
        defer { as_core_free(core) }
        let phone = CProps(["media.role": "Phone", "application.name": "/usr/bin/linphone"])
        let client = CProps(["application.name": "/usr/bin/linphone"])
        "/usr/bin/linphone".withCString { exe in
            var trusted = as_client_identity(executable: exe, app_id: nil, uid: 1000, access: nil, flatpak: false,
                                             core_access: 1, access_from_daemon: false)
            client.with { as_core_client_added(core, 1, $0, &trusted) }
        }
        var unknown = as_client_identity(executable: nil, app_id: nil, uid: -1, access: nil, flatpak: false,
                                         core_access: -1, access_from_daemon: true)
        client.with { as_core_client_added(core, 2, $0, &unknown) }
        "restricted".withCString { access in
            var huge = as_client_identity(executable: nil, app_id: nil, uid: Int64.max, access: access, flatpak: true,
                                          core_access: 1, access_from_daemon: true)
            client.with { as_core_client_added(core, 3, $0, &huge) }
        }
        for c in UInt32(1)...3 {
            phone.with { as_core_stream_added(core, c * 10, c, AS_STREAM_OUTPUT, $0) }
        }
        let priorities = publishedPriorities()
        #expect(priorities == [10: "call", 20: "normal", 30: "normal"])
    }

    /// Call priority for every unsandboxed client (no allow list): a client that claims
    /// unrestricted access the daemon never granted (PipeWire 0.3.65 takes a client's own
    /// `pipewire.access`) is sandboxed and gets none.
    @Test func aClaimedAccessTheDaemonDidNotGrantGivesNoCallPriority() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        let client = CProps(["application.name": "softphone"])
        "unrestricted".withCString { access in
            var granted = as_client_identity(executable: nil, app_id: nil, uid: 1000, access: access, flatpak: false,
                                             core_access: 1, access_from_daemon: false)
            client.with { as_core_client_added(core, 1, $0, &granted) }
            var spoof = as_client_identity(executable: nil, app_id: nil, uid: 1000, access: access, flatpak: false,
                                           core_access: 0, access_from_daemon: false)
            client.with { as_core_client_added(core, 2, $0, &spoof) }
        }
        let phone = CProps(["media.role": "Phone"])
        for c in UInt32(1)...2 { phone.with { as_core_stream_added(core, c * 10, c, AS_STREAM_OUTPUT, $0) } }
        let priorities = publishedPriorities()
        #expect(priorities == [10: "call", 20: "normal"])
    }

    @Test func nullCoreIsIgnoredByEveryEntryPoint() {
        let props = CProps(["media.role": "Music"])
        props.with { p in
            var identity = as_client_identity(executable: nil, app_id: nil, uid: -1, access: nil, flatpak: false,
                                              core_access: -1, access_from_daemon: true)
            as_core_client_added(nil, 1, p, &identity)
            as_core_client_changed(nil, 1, p)
            as_core_stream_added(nil, 2, 1, AS_STREAM_OUTPUT, p)
            as_core_stream_changed(nil, 2, p)
            as_core_endpoint_added(nil, 3, AS_ENDPOINT_SINK, p)
            as_core_endpoint_changed(nil, 3, p)
            as_core_client_own_properties(nil, 1, p)
        }
        as_core_republish(nil)
        as_core_stream_running(nil, 2, true)
        as_core_stream_activated(nil, 2)
        as_core_stream_faded_out(nil, 2)
        var facts = as_endpoint_route_facts(
            name: nil, port_type: nil, available: AS_ROUTE_AVAILABILITY_NO, unavailable: nil, n_unavailable: 0)
        as_core_endpoint_routes(nil, 3, &facts)
        as_core_undo_pauses(nil)
        as_core_endpoint_mute_changed(nil, 3, true)
        as_core_link_added(nil, 4, 2, 3)
        as_core_link_removed(nil, 4)
        as_core_stream_removed(nil, 2)
        as_core_endpoint_removed(nil, 3)
        as_core_client_removed(nil, 1)
        #expect(as_core_session_count(nil) == 0)
        #expect(as_core_stream_count(nil) == 0)
        as_core_free(nil)
        #expect(effects.calls.isEmpty)
    }

    @Test func nullArgsAndAnEmptyTableCreateACoreThatRunsWithoutCallbacks() {
        var table = as_core_effects()  // every callback NULL: skipped
        var error = [CChar](repeating: 0, count: 16)
        let core = withUnsafePointer(to: &table) { t in
            error.withUnsafeMutableBufferPointer { as_core_new(nil, t, nil, $0.baseAddress, $0.count) }
        }
        #expect(core != nil)
        let music = CProps(["media.role": "Music"])
        music.with { as_core_stream_added(core, 10, 1, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 10, true)
        #expect(as_core_stream_count(core) == 1)
        as_core_free(core)
    }

    @Test func nullPropsNullItemsAndZeroItemsAreEmptyPropertySets() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        as_core_client_added(core, 1, nil, nil)
        let music = CProps(["media.role": "Music"])
        // n_items 0 over real items: nothing is read.
        music.with(nItems: 0) { as_core_stream_added(core, 10, 1, AS_STREAM_OUTPUT, $0) }
        // items NULL with a non-zero count: nothing is read.
        var dangling = as_props(items: nil, n_items: 5)
        as_core_stream_added(core, 11, 1, AS_STREAM_OUTPUT, &dangling)
        as_core_stream_changed(core, 11, nil)
        as_core_endpoint_added(core, 20, AS_ENDPOINT_SINK, nil)
        as_core_endpoint_changed(core, 20, &dangling)
        // A route read with NULL strings: a NULL port type is none, NULL names are skipped.
        "speaker".withCString { name in
            let names: [UnsafePointer<CChar>?] = [nil, nil]
            names.withUnsafeBufferPointer { buf in
                var facts = as_endpoint_route_facts(
                    name: name, port_type: nil, available: AS_ROUTE_AVAILABILITY_UNKNOWN,
                    unavailable: buf.baseAddress, n_unavailable: UInt32(buf.count))
                as_core_endpoint_routes(core, 20, &facts)
            }
        }
        as_core_client_changed(core, 1, nil)
        as_core_link_added(core, 30, 10, 20)
        as_core_stream_running(core, 10, true)
        as_core_stream_running(core, 11, true)
        #expect(as_core_stream_count(core) == 2)
        expectEffectsNameOnly(streams: [10, 11], clients: [1])
    }

    @Test func nullKeysAreSkippedAndNullValuesReadAsEmpty() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        let props = CProps([
            (key: nil, value: Array("playback".utf8)),
            (key: Array("audio.session.category".utf8), value: nil),
            (key: nil, value: nil),
            (key: Array("application.name".utf8), value: Array("nullish".utf8)),
        ])
        props.with { as_core_client_added(core, 5, $0, nil) }
        props.with { as_core_stream_added(core, 50, 5, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 50, true)
        #expect(as_core_stream_count(core) == 1)
        expectEffectsNameOnly(streams: [50], clients: [5])
        // The empty category is a bad declaration, refused with badParam; the core carries on.
        let refusal = effects.calls.events.first { $0.string("type") == "declarationRefused" }
        if let refusal {
            #expect((refusal["error"] as? [String: Any])?["code"] as? String == "badParam")
        }
    }

    @Test func invalidUTF8IsRepairedIntoTheMetadataAsReplacementCharacters() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        let bad: [UInt8] = [0x70, 0x77, 0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0x2D, 0xF0, 0x9F]  // "pw" + garbage
        let client = CProps([
            (key: Array("application.name".utf8), value: bad),
            (key: [0xFE, 0x6B], value: bad),  // a key that is not UTF-8
        ])
        client.with { as_core_client_added(core, 7, $0, nil) }
        let stream = CProps([
            (key: Array("media.role".utf8), value: [0x4D, 0x75, 0xFF, 0x69, 0x63]),  // "Mu\xFFic": no such role
            (key: Array("media.class".utf8), value: Array("Stream/Output/Audio".utf8)),
        ])
        stream.with { as_core_stream_added(core, 70, 7, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 70, true)
        expectEffectsNameOnly(streams: [70], clients: [7])
        let session = try #require(effects.calls.metadataWrites.last { $0.key == "audio-session.session" }?.value)
        let application = try #require(session.string("application"))
        #expect(application.hasPrefix("pw\u{FFFD}"))
        #expect(application.unicodeScalars.allSatisfy { $0 != "\u{0}" })
    }

    /// Bounded memory: a 64 KiB name is cut to 256 bytes, a 64 KiB declaration value is
    /// refused with badParam; neither is kept whole.
    @Test func sixtyFourKiBValuesAreCutOrRefusedNeverKeptWhole() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        let long = String(repeating: "x", count: 64 * 1024)
        let client = CProps(["application.name": long, "audio.session.mode": long])
        client.with { as_core_client_added(core, 8, $0, nil) }
        let stream = CProps(["media.role": long, "node.name": long])
        stream.with { as_core_stream_added(core, 80, 8, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 80, true)
        expectEffectsNameOnly(streams: [80], clients: [8])
        let application = effects.calls.metadataWrites.last { $0.key == "audio-session.session" }?.value?.string("application")
        #expect(application?.utf8.count == 256)
        let refusal = effects.calls.events.first { $0["type"] as? String == "declarationRefused" }
        #expect((refusal?["error"] as? [String: Any])?["code"] as? String == "badParam", "\(String(describing: refusal))")
        for case .publish(_, _, _, let value?) in effects.calls { #expect(value.utf8.count < 4096) }
    }

    @Test func idsZeroAndUInt32MaxAreOrdinaryIds() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        let sink = CProps(["node.name": "headphones", "device.form-factor": "headphones", "media.class": "Audio/Sink"])
        sink.with { as_core_endpoint_added(core, UInt32.max, AS_ENDPOINT_SINK, $0) }
        let music = CProps(["media.role": "Music", "application.name": "max"])
        music.with { as_core_client_added(core, UInt32.max, $0, nil) }
        music.with { as_core_stream_added(core, 0, UInt32.max, AS_STREAM_OUTPUT, $0) }
        as_core_link_added(core, 0, 0, UInt32.max)
        as_core_stream_running(core, 0, true)
        #expect(as_core_stream_count(core) == 1)
        // The headphones go: stream 0 played on them and is paused (R30).
        as_core_endpoint_removed(core, UInt32.max)
        #expect(effects.calls.pausedNodes == [0])
        as_core_link_removed(core, 0)
        as_core_stream_removed(core, 0)
        as_core_client_removed(core, UInt32.max)
        #expect(as_core_stream_count(core) == 0)
        expectEffectsNameOnly(streams: [0], clients: [UInt32.max])
    }

    @Test func removalsAndChangesOfUnknownIdsDoNothing() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        let props = CProps(["media.role": "Phone"])
        as_core_stream_removed(core, 99)
        as_core_client_removed(core, 99)
        as_core_endpoint_removed(core, 99)
        as_core_link_removed(core, 99)
        props.with { as_core_stream_changed(core, 98, $0) }
        props.with { as_core_endpoint_changed(core, 98, $0) }
        props.with { as_core_client_changed(core, 98, $0) }
        as_core_stream_running(core, 97, true)
        as_core_stream_activated(core, 97)
        "analog-output-headphones".withCString { name in
            var facts = as_endpoint_route_facts(
                name: name, port_type: nil, available: AS_ROUTE_AVAILABILITY_NO, unavailable: nil, n_unavailable: 12)
            as_core_endpoint_routes(core, 96, &facts)
            as_core_endpoint_routes(core, 96, nil)
        }
        as_core_undo_pauses(core)
        as_core_endpoint_mute_changed(core, 96, true)
        as_core_link_added(core, 95, 94, 93)
        #expect(as_core_stream_count(core) == 0)
        #expect(as_core_session_count(core) == 0)
        expectEffectsNameOnly(streams: [])
        #expect(effects.calls.streamEffects.isEmpty)
        #expect(effects.calls.events.isEmpty)
    }

    @Test func removalBeforeAdditionThenTheSameIdsAddedWork() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        as_core_stream_removed(core, 10)
        as_core_client_removed(core, 1)
        as_core_link_removed(core, 5)
        let music = CProps(["media.role": "Music"])
        music.with { as_core_client_added(core, 1, $0, nil) }
        music.with { as_core_stream_added(core, 10, 1, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 10, true)
        #expect(as_core_stream_count(core) == 1)
        #expect(as_core_session_count(core) == 1)
        // Added twice: still one stream.
        music.with { as_core_stream_added(core, 10, 1, AS_STREAM_OUTPUT, $0) }
        #expect(as_core_stream_count(core) == 1)
        as_core_stream_removed(core, 10)
        as_core_stream_removed(core, 10)
        #expect(as_core_stream_count(core) == 0)
        expectEffectsNameOnly(streams: [10], clients: [1])
    }

    @Test func outOfRangeEnumValuesAreReadAsTheDefaultKind() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        let props = CProps(["media.role": "Music"])
        props.with { as_core_stream_added(core, 10, 1, as_stream_direction(rawValue: 7), $0) }
        props.with { as_core_endpoint_added(core, 20, as_endpoint_kind(rawValue: 0xFFFF_FFFF), $0) }
        #expect(as_core_stream_count(core) == 1)
        expectEffectsNameOnly(streams: [10])
    }

    @Test func everyCallbackIsReachedThroughTheTableWithTheDataPointer() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        let sink = CProps(["node.name": "headphones", "device.form-factor": "headphones"])
        sink.with { as_core_endpoint_added(core, 1, AS_ENDPOINT_SINK, $0) }
        let music = CProps(["media.role": "Music"])
        music.with { as_core_stream_added(core, 10, 100, AS_STREAM_OUTPUT, $0) }
        as_core_link_added(core, 50, 10, 1)
        as_core_stream_running(core, 10, true)
        let nav = CProps(["media.role": "Navigation"])
        nav.with { as_core_stream_added(core, 11, 101, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 11, true)
        let phone = CProps(["media.role": "Phone"])
        phone.with { as_core_stream_added(core, 12, 102, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 12, true)
        as_core_stream_faded_out(core, 10)
        as_core_stream_running(core, 12, false)
        let calls = effects.calls
        #expect(calls.contains(.duck(10, gain: 0.2, rampMilliseconds: 250)))
        #expect(calls.contains(.fade(10, gain: 0, milliseconds: 300)))
        #expect(calls.pausedNodes.contains(10))
        #expect(calls.contains { if case .publish(0, "audio-session.event", _, _) = $0 { return true } else { return false } })
        #expect(calls.contains { if case .log = $0 { return true } else { return false } })
        expectEffectsNameOnly(streams: [10, 11, 12])
    }

    /// R42 through the ABI: the module's defaults fade an interrupted stream out over 300 ms,
    /// pause it on `as_core_stream_faded_out` and fade it back in over 500 ms; a module
    /// without the fade callback (a version 3 table) gets today's pause at once.
    @Test func anInterruptionFadesThroughTheTableAndPausesOnTheModulesReport() throws {
        let core = try newCore()
        defer { as_core_free(core) }
        CProps(["media.role": "Music"]).with { as_core_stream_added(core, 10, 100, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 10, true)
        CProps(["media.role": "Phone"]).with { as_core_stream_added(core, 12, 102, AS_STREAM_OUTPUT, $0) }
        effects.calls = []
        as_core_stream_running(core, 12, true)
        #expect(effects.calls.streamEffects == [.fade(10, gain: 0, milliseconds: 300)])
        effects.calls = []
        as_core_stream_faded_out(core, 10)
        #expect(effects.calls.streamEffects == [.pause(10)])
        effects.calls = []
        as_core_stream_running(core, 12, false)
        // The fade-in's first (inaudible) step reaches the stream before it plays again.
        #expect(effects.calls.streamEffects == [.fade(10, gain: 1, milliseconds: 500), .resume(10)])

        var table = recordingTable
        table.version = 3
        table.fade = nil
        let data = Unmanaged.passUnretained(effects).toOpaque()
        var error = [CChar](repeating: 0, count: 64)
        let old = try #require(withUnsafePointer(to: &table) { t in
            error.withUnsafeMutableBufferPointer { as_core_new(nil, t, data, $0.baseAddress, $0.count) }
        })
        defer { as_core_free(old) }
        CProps(["media.role": "Music"]).with { as_core_stream_added(old, 10, 100, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(old, 10, true)
        CProps(["media.role": "Phone"]).with { as_core_stream_added(old, 12, 102, AS_STREAM_OUTPUT, $0) }
        effects.calls = []
        as_core_stream_running(old, 12, true)
        #expect(effects.calls.streamEffects == [.pause(10)])
    }

    @Test func freeingACoreWithLiveObjectsCallsNoEffect() throws {
        let core = try newCore()
        let music = CProps(["media.role": "Music"])
        music.with { as_core_stream_added(core, 10, 1, AS_STREAM_OUTPUT, $0) }
        as_core_stream_running(core, 10, true)
        let before = effects.calls.count
        as_core_free(core)
        #expect(effects.calls.count == before)
    }
}
