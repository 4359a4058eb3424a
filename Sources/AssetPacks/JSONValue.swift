import Foundation
import AssetSystem
import AssetStore

/// Any JSON value, decoded with `JSONDecoder` (which accepts comments through
/// `allowsJSON5` on every platform) and turned into Foundation's plain types,
/// so manifest checks can walk it field by field and name what is wrong.
enum JSONValue: Decodable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// Parses JSON with comments (JSON5 syntax is accepted).
    static func parse(_ data: Data) throws -> JSONValue {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        return try decoder.decode(JSONValue.self, from: data)
    }

    /// The value as `[String: Any]`, `[Any]`, `String`, `Double`, `Bool` or `NSNull`.
    var plain: Any {
        switch self {
        case .object(let o): return o.mapValues(\.plain)
        case .array(let a): return a.map(\.plain)
        case .string(let s): return s
        case .number(let n): return n
        case .bool(let b): return b
        case .null: return NSNull()
        }
    }
}
