import Foundation
import Sandbox
import Testing

extension Integration {
    /// The recording's reader itself: what the fade and duck tests compare, and what they
    /// leave out, on tones made here with known steps and gaps.
    @Suite struct LevelsTests {
        /// A stereo 440 Hz tone at 48 kHz, `gains[k]` over its block k of 1024 frames,
        /// with the frames in `cut` left out (what a recorder that misses a cycle writes).
        static func tone(gains: [Float], cut: Range<Int> = 0..<0, zeros: Range<Int> = 0..<0) -> WAVFile {
            var samples: [Float] = []
            for n in 0..<gains.count * 1024 where !cut.contains(n) {
                let wave = Float(sin(2 * Double.pi * 440 * Double(n) / 48000))
                let x: Float = zeros.contains(n) ? 0 : gains[n / 1024] * 0.5 * wave
                samples += [x, x]
            }
            return WAVFile(sampleRate: 48000, channels: 2, format: .f32, samples: samples)
        }

        @Test func stepsInAnUnbrokenToneAreAllCompared() {
            let db: (Float) -> Float = { Float(pow(10, Double($0) / 20)) }
            let levels = Levels(Self.tone(gains: [1, 1, db(-5.5), db(-5.5), db(-11), db(-11), db(-16.5), db(-16.5)]), tone: 440)
            let s = levels.steps(0..<8)
            #expect(s.broken == 0)
            #expect(s.compared == 7)
            #expect(abs(s.largest - 5.5) < 0.3, "largest \(s.largest)")
            #expect(levels.partial.isEmpty)
        }

        @Test func twoStepsInOneBlockAreSeenWhenTheRecordingIsUnbroken() {
            let db: (Float) -> Float = { Float(pow(10, Double($0) / 20)) }
            let s = Levels(Self.tone(gains: [1, 1, db(-11), db(-11), db(-11)]), tone: 440).steps(0..<5)
            #expect(s.broken == 0)
            #expect(s.largest > 10.5, "largest \(s.largest)")
        }

        @Test func aCycleTheRecorderMissedIsNotComparedAcross() {
            let db: (Float) -> Float = { Float(pow(10, Double($0) / 20)) }
            // The tone steps by 5.5 dB every two blocks; the recording lacks the two blocks
            // at -11 dB (frames 4096..<6144), so -5.5 and -16.5 are neighbours in the file.
            let gains: [Float] = [1, 1, db(-5.5), db(-5.5), db(-11), db(-11), db(-16.5), db(-16.5), db(-16.5)]
            let levels = Levels(Self.tone(gains: gains, cut: 4096..<6144), tone: 440)
            let s = levels.steps(0..<levels.blocks.count)
            #expect(s.broken == 1)
            #expect(abs(s.largest - 5.5) < 0.3, "largest \(s.largest)")
            // Any gap that is not a whole number of the tone's periods breaks the phase.
            for missing in [64, 512, 1024, 2048] {
                let l = Levels(Self.tone(gains: Array(repeating: 1, count: 6), cut: 2048..<2048 + missing), tone: 440)
                #expect(!l.unbroken(1, 2), "a gap of \(missing) frames")
            }
        }

        @Test func aDropoutInsideABlockIsSkipped() {
            let levels = Levels(Self.tone(gains: Array(repeating: 1, count: 6), zeros: 2100..<2600), tone: 440)
            #expect(levels.partial == [2])
            #expect(levels.steps(0..<6).largest < 0.3)
            // A block of digital silence is one too.
            let silent = Levels(Self.tone(gains: [1, 1, 0, 1, 1]), tone: 440)
            #expect(silent.blocks[2] == -.infinity)
            #expect(silent.steps(0..<5).largest < 0.3)
        }

        /// A cycle the loaded machine missed at a 2048-frame quantum is two silent blocks,
        /// and it can fall on either end of the range the duck test measures.
        @Test func aDropoutAtEitherEndOfTheRangeIsSkippedAndTheStepsInsideAreStillMeasured() {
            let db: (Float) -> Float = { Float(pow(10, Double($0) / 20)) }
            let levels = Levels(Self.tone(gains: [0, 0, 1, 1, db(-5.5), db(-5.5), 0, 0]), tone: 440)
            let s = levels.steps(0..<8)
            #expect(abs(s.largest - 5.5) < 0.3, "largest \(s.largest)")
            #expect(s.compared == 3)
            #expect(levels.silentBlocks(0..<8) == [0, 1, 6, 7])
            // A range of silence alone has no steps to measure.
            #expect(levels.steps(0..<2).compared == 0)
        }
    }
}
