import AudioSessionCoreABI
import PipeWireFacts
import SessionPolicy
import Testing

/// The module asks what each node the daemon announces is, by its `media.class`, read from
/// the C string where it lies: the classes the policy watches, exactly, and nothing else.
@Suite struct NodeClassTests {
    static let watched: [(String, NodeClass, as_node_class)] = [
        ("Stream/Output/Audio", .stream(.output), AS_NODE_STREAM_OUTPUT),
        ("Stream/Input/Audio", .stream(.input), AS_NODE_STREAM_INPUT),
        ("Audio/Sink", .endpoint(.sink), AS_NODE_SINK),
        ("Audio/Duplex", .endpoint(.sink), AS_NODE_SINK),
        ("Audio/Source", .endpoint(.source), AS_NODE_SOURCE),
        ("Audio/Source/Virtual", .endpoint(.source), AS_NODE_SOURCE),
    ]

    /// Near misses: a prefix, a longer class, another case, video, MIDI, nothing.
    static let others = ["Audio/Sin", "Audio/SinkX", "Audio/Sink/Internal", "audio/sink", "Stream/Output/Video",
                         "Stream/Output/Audio/", "Stream/Output", "Video/Source", "Midi/Bridge", "Audio/Source/Virtua", ""]

    @Test func theWatchedClassesAreKnownByTheirExactName() {
        for (name, expected, abi) in Self.watched {
            #expect(NodeClass(mediaClass: name) == expected, "\(name)")
            #expect(name.withCString { AudioSessionCoreABI.as_core_classify_node($0) } == abi, "\(name)")
        }
    }

    @Test func everyOtherClassIsNoneOfThem() {
        for name in Self.others {
            #expect(NodeClass(mediaClass: name) == nil, "\(name)")
            #expect(name.withCString { AudioSessionCoreABI.as_core_classify_node($0) } == AS_NODE_OTHER, "\(name)")
        }
        #expect(AudioSessionCoreABI.as_core_classify_node(nil) == AS_NODE_OTHER)
    }
}
