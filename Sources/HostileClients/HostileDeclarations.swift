/// Declarations a hostile client might send, one SPA-JSON object of stream properties per
/// client, for the stress-clients fixture (Tests/Fixtures/stress-clients.c reads one per
/// line): 16 KiB values, 100 extra `audio.session.*` keys, a 500-entry option list, and 200
/// large unrelated keys. The integration tests and `make bench` use the same ones.
public enum HostileDeclarations {
    public static func lines(round: Int, count: Int) -> [String] {
        let big = String(repeating: "x", count: 16 * 1024)
        let manyKeys = (0..<100).map { "audio.session.k\($0)=\"\(String(repeating: "k", count: 100))\"" }.joined(separator: " ")
        let options = Array(repeating: "mixWithOthers", count: 500).joined(separator: ",")
        let otherKeys = (0..<200).map { "x.junk\($0)=\"\(String(repeating: "j", count: 512))\"" }.joined(separator: " ")
        let kinds = [
            "audio.session.category=playback audio.session.mode=\"\(big)\"",
            "audio.session.category=playback \(manyKeys)",
            "audio.session.category=playback audio.session.options=\"\(options)\"",
            "audio.session.category=playback media.role=Music application.name=\"\(big)\" \(otherKeys)",
        ]
        return (0..<count).map { i in "{ node.name=hostile-\(round)-\(i) \(kinds[i % kinds.count]) }" }
    }
}
