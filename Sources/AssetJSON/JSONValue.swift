/// Any JSON value (RFC 8259).
///
/// Read one with ``parse(_:options:)``, which refuses anything that is not
/// well-formed JSON with a ``JSONError`` naming the line and column; write
/// one with ``encoded(sortedKeys:)``. Literals build values directly:
///
/// ```swift
/// let v: JSONValue = ["id": "Tutorial", "sizes": [1, 2], "beta": false, "note": nil]
/// ```
public enum JSONValue: Sendable, Hashable {
    /// An object, members in document order.
    case object(JSONObject)
    /// An array.
    case array([JSONValue])
    /// A string (escapes decoded).
    case string(String)
    /// A number, as its literal text.
    case number(JSONNumber)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
}

extension JSONValue {
    /// The member named `key` when this is an object that has one; `nil`
    /// otherwise.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The object, when this is one.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The number, when this is one.
    public var numberValue: JSONNumber? {
        if case .number(let n) = self { return n }
        return nil
    }

    /// The boolean, when this is one.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
                     ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    /// `.string(value)`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `.number` of the integer `value`.
    public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }
    /// `.bool(value)`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `.array(elements)`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `.object` of the members in this order.
    ///
    /// - Precondition: no two keys are equal.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(uniqueKeysWithValues: elements))
    }
    /// `.null`.
    public init(nilLiteral: ()) { self = .null }
}
