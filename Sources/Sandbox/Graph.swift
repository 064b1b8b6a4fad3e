import Foundation

/// Finding things in a `pw-dump` (see `Sandbox.dump()`): a program's stream,
/// a node by name, the links. Shared by the integration tests and the benchmarks.
public enum Graph {
    /// An integer property of a pw-dump object (pw-dump writes some as numbers, some as strings).
    public static func int(_ value: Any?) -> Int? {
        (value as? Int) ?? (value as? String).flatMap { Int($0) }
    }

    /// The first node of `mediaClass` whose `application.process.id` is `pid`
    /// (pw-play's own node; for paplay the node pipewire-pulse made for it).
    public static func streamNode(_ dump: [[String: Any]], pid: Int32, mediaClass: String = "Stream/Output/Audio") -> [String: Any]? {
        // pw-play's node does not carry the pid itself: its client does.
        let clients = Set(Sandbox.objects(dump, type: "PipeWire:Interface:Client").compactMap { c -> Int? in
            int(Sandbox.props(c)["application.process.id"]) == Int(pid) ? c["id"] as? Int : nil
        })
        return Sandbox.objects(dump, type: "PipeWire:Interface:Node").first { node in
            let p = Sandbox.props(node)
            guard p["media.class"] as? String == mediaClass else { return false }
            return int(p["application.process.id"]) == Int(pid) || int(p["client.id"]).map(clients.contains) == true
        }
    }

    public static func nodeID(_ dump: [[String: Any]], named name: String) -> Int? {
        Sandbox.objects(dump, type: "PipeWire:Interface:Node")
            .first { Sandbox.props($0)["node.name"] as? String == name }?["id"] as? Int
    }

    /// (output node, input node, state) of every link.
    public static func links(_ dump: [[String: Any]]) -> [(output: Int, input: Int, state: String)] {
        Sandbox.objects(dump, type: "PipeWire:Interface:Link").compactMap { link in
            guard let info = link["info"] as? [String: Any],
                  let o = int(info["output-node-id"]), let i = int(info["input-node-id"]) else { return nil }
            return (o, i, info["state"] as? String ?? "")
        }
    }
}
