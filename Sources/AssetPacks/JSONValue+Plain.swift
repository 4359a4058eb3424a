internal import AssetJSON
import Foundation

extension JSONValue {
    /// The value as Foundation's plain types, so manifest checks can walk it
    /// field by field and name what is wrong: `[String: Any]`, `[Any]`,
    /// `String`, `JSONNumber`, `Bool` or `NSNull`. Objects lose their member
    /// order; their keys are unique (the parser refuses repeated ones).
    var plain: Any {
        switch self {
        case .object(let o): return Dictionary(uniqueKeysWithValues: o.members.map { ($0.key, $0.value.plain) })
        case .array(let a): return a.map(\.plain)
        case .string(let s): return s
        case .number(let n): return n
        case .bool(let b): return b
        case .null: return NSNull()
        }
    }
}
