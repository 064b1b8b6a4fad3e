import Foundation

/// The JSON schemas of docs/cli.md (```json schema=NAME blocks) and a checker
/// for the subset they use: type, required, properties, items, enum, $ref.
struct CLISchema {
    let schemas: [String: Any]

    init() throws {
        let text = try String(contentsOfFile: Support.checkoutRoot + "/docs/cli.md", encoding: .utf8)
        var found: [String: Any] = [:]
        var name: String?
        var body = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let n = name {
                if line.hasPrefix("```") {
                    guard let obj = try? JSONSerialization.jsonObject(with: Data(body.utf8)) else {
                        throw TestFailure("docs/cli.md: schema \(n) is not valid JSON")
                    }
                    found[n] = obj
                    name = nil
                    body = ""
                } else {
                    body += line + "\n"
                }
            } else if line.hasPrefix("```json schema=") {
                name = String(line.dropFirst("```json schema=".count))
            }
        }
        schemas = found
    }

    /// The violations of `value` against schema `name` (empty: valid).
    func check(_ value: Any, against name: String) -> [String] {
        guard let s = schemas[name] else { return ["no schema \(name) in docs/cli.md"] }
        return check(value, s, path: "$")
    }

    private func check(_ value: Any, _ schema: Any, path: String) -> [String] {
        guard var s = schema as? [String: Any] else { return ["\(path): bad schema"] }
        if let ref = s["$ref"] as? String {
            guard let r = schemas[ref] as? [String: Any] else { return ["\(path): unknown $ref \(ref)"] }
            s = r
        }
        var errors: [String] = []
        if let type = s["type"] as? String, !Self.has(value, type: type) {
            return ["\(path): expected \(type), got \(value)"]
        }
        if let e = s["enum"] as? [Any], !e.contains(where: { "\($0)" == "\(value)" }) {
            errors.append("\(path): \(value) not in \(e)")
        }
        if let obj = value as? [String: Any] {
            for r in (s["required"] as? [String]) ?? [] where obj[r] == nil {
                errors.append("\(path): missing \(r)")
            }
            for (k, sub) in (s["properties"] as? [String: Any]) ?? [:] {
                if let v = obj[k], !(v is NSNull) { errors += check(v, sub, path: path + "." + k) }
            }
        }
        if let arr = value as? [Any], let items = s["items"] {
            for (i, v) in arr.enumerated() { errors += check(v, items, path: "\(path)[\(i)]") }
        }
        return errors
    }

    /// JSONSerialization gives booleans as NSNumber of objCType "c".
    private static func isBool(_ v: Any) -> Bool {
        guard let n = v as? NSNumber else { return false }
        return String(cString: n.objCType) == "c"
    }

    private static func has(_ v: Any, type: String) -> Bool {
        switch type {
        case "object": return v is [String: Any]
        case "array": return v is [Any]
        case "string": return v is String
        case "boolean":
            return isBool(v)
        case "integer":
            guard let n = v as? NSNumber, !isBool(v) else { return false }
            return n.doubleValue == n.doubleValue.rounded()
        case "number":
            return v is NSNumber && !isBool(v)
        default: return false
        }
    }
}
