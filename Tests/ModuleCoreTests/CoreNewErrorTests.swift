import AudioSessionCoreABI
import AudioSessionModuleCore
import Foundation
import SessionPolicy
import PipeWireFacts
import Testing

/// `as_core_new` with bad arguments: NULL and a sentence in the caller's buffer.
@Suite struct CoreNewErrorTests {
    /// Calls as_core_new with `duck.level = 7` and an error buffer of `size` bytes
    /// (pre-filled with 0x7F); returns the core and the buffer.
    func newCore(args: KeyValuePairs<String, String>, bufferSize size: Int, effects: Bool = true)
        -> (OpaquePointer?, [CChar])
    {
        var buffer = [CChar](repeating: 0x7F, count: max(size, 1))
        var table = recordingTable
        let props = CProps(args)
        let core: OpaquePointer? = props.with { p in
            buffer.withUnsafeMutableBufferPointer { b in
                withUnsafePointer(to: &table) { t in
                    AudioSessionCoreABI.as_core_new(p, effects ? t : nil, nil, b.baseAddress, size)
                }
            }
        }
        return (core, buffer)
    }

    @Test func badArgumentReturnsNullAndWritesTheSentenceNamingTheKey() {
        let (core, buffer) = newCore(args: ["duck.level": "7"], bufferSize: 256)
        #expect(core == nil)
        AudioSessionCoreABI.as_core_free(core)
        #expect(String(terminated: buffer) == "duck.level: expected a gain from 0 to 1")
    }

    @Test func aShortBufferGetsATruncatedTerminatedSentence() {
        let (core, buffer) = newCore(args: ["duck.level": "7"], bufferSize: 8)
        #expect(core == nil)
        #expect(buffer[7] == 0)
        #expect(String(terminated: buffer) == "duck.le")
    }

    @Test func aBufferOfOneByteGetsOnlyTheTerminator() {
        let (core, buffer) = newCore(args: ["profile": "android"], bufferSize: 1)
        #expect(core == nil)
        #expect(buffer == [0])
    }

    @Test func aBufferOfZeroBytesIsNotWritten() {
        let (core, buffer) = newCore(args: ["profile": "android"], bufferSize: 0)
        #expect(core == nil)
        #expect(buffer == [0x7F])
    }

    @Test func aNullBufferIsNotWritten() {
        var table = recordingTable
        let props = CProps(["profile": "android"])
        let core = props.with { p in withUnsafePointer(to: &table) { AudioSessionCoreABI.as_core_new(p, $0, nil, nil, 512) } }
        #expect(core == nil)
    }

    @Test func aMissingEffectTableIsAnErrorToo() {
        let (core, buffer) = newCore(args: [:], bufferSize: 64, effects: false)
        #expect(core == nil)
        #expect(String(terminated: buffer) == "no effect table")
    }

    @Test func goodArgumentsLeaveTheBufferAlone() {
        let (core, buffer) = newCore(args: ["duck.level": "0.3", "role.table": "{ Game = { category = ambient } }"],
                                     bufferSize: 4)
        #expect(core != nil)
        AudioSessionCoreABI.as_core_free(core)
        #expect(buffer == [0x7F, 0x7F, 0x7F, 0x7F])
    }
}
