import AudioSession
import Foundation
import Testing

@Suite struct DeclarationValidationTests {
    @Test func section4AnInvalidOptionIsRefusedBeforeAnythingIsSentAndThePreviousDeclarationStays() throws {
        let s = offlineSession()
        try s.setCategory(.playback, mode: .spokenAudio)
        #expect(throws: SessionError.self) { try s.setCategory(.record, options: .duckOthers) }
        do {
            try s.setCategory(.record, options: .duckOthers)
        } catch {
            #expect(error.code == .incompatibleCategory)
            #expect(error.message.contains("[§4]"))
        }
        #expect(s.category == .playback)
        #expect(s.mode == .spokenAudio)
    }

    @Test func section3AModeTheCategoryDoesNotAcceptIsRefused() throws {
        let s = offlineSession()
        do {
            try s.setCategory(.playAndRecord, mode: .voicePrompt)
            Issue.record("accepted voicePrompt for playAndRecord")
        } catch {
            #expect(error.code == .incompatibleCategory)
        }
        try s.setCategory(.playback)
        do {
            try s.setMode(.voiceChat)
            Issue.record("accepted voiceChat for playback")
        } catch {
            #expect(error.code == .incompatibleCategory)
        }
        #expect(s.mode == .default)
    }

    @Test func availableModesFollowTheCategory() throws {
        let s = offlineSession()
        try s.setCategory(.playAndRecord)
        #expect(s.availableModes.contains(.voiceChat))
        #expect(!s.availableModes.contains(.voicePrompt))
        try s.setCategory(.playback)
        #expect(s.availableModes.contains(.voicePrompt))
        #expect(!s.availableModes.contains(.voiceChat))
        #expect(s.availableCategories.count == 6)
    }
}
