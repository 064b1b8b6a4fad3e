import AudioSession
import PipeWirePorts
import ArgumentParser
import Foundation

/// `pw-session route`: the current route and the available outputs and inputs.
struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route",
        abstract: "Show the current route and the outputs and inputs with their port types.",
        discussion: """
        Examples:
          pw-session route
          pw-session route --json | jq -r '.currentRoute.outputs[].type'
        """
    )

    @Flag(name: .long, help: "One JSON document (schema: docs/cli.md).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for the policy.", valueName: "seconds"))
    var timeout: Double = 3

    struct Endpoint: Encodable {
        var id: UInt32
        var name: String
        var uid: String
        var type: String
    }

    struct Document: Encodable {
        var currentRoute: RouteDescription
        var outputs: [Endpoint]
        var inputs: [Endpoint]
    }

    func run() throws {
        let session = try observePolicy(timeout: timeout)
        let snap = session.policySnapshot
        func endpoints(_ classes: Set<String>, _ kind: EndpointKind) -> [Endpoint] {
            snap.nodes.sorted { $0.key < $1.key }.compactMap { id, p in
                guard let cls = p["media.class"], classes.contains(cls) else { return nil }
                let port = SessionPort.from(p, kind: kind)
                // The registry carries few properties; the policy's published type (from the full node and device properties) wins.
                let published = (snap.global?.currentRoute.outputs ?? []) + (snap.global?.currentRoute.inputs ?? [])
                let type = published.first { $0.uid == port.uid }?.type ?? port.type.rawValue
                return Endpoint(id: id, name: port.name, uid: port.uid, type: type)
            }
        }
        let doc = Document(currentRoute: snap.global?.currentRoute ?? RouteDescription(.empty),
                           outputs: endpoints(["Audio/Sink"], .sink),
                           inputs: endpoints(["Audio/Source", "Audio/Source/Virtual"], .source))
        if json {
            say(jsonLine(doc))
            return
        }
        say("current route: \(describe(doc.currentRoute.route))")
        for o in doc.outputs { say("output \(o.id)  \(o.name)  \(o.uid)  [\(o.type)]") }
        for i in doc.inputs { say("input  \(i.id)  \(i.name)  \(i.uid)  [\(i.type)]") }
    }
}
