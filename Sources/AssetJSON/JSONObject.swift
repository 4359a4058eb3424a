/// A JSON object: its members in document order, with lookup by key.
///
/// Keys are unique. "Unique" is Swift's `String` equality, which treats
/// canonically equivalent Unicode as equal (`"\u{E9}"` and `"e\u{301}"`),
/// so that ``subscript(_:)`` can always tell members apart; the parser
/// refuses a document whose object repeats a key in this sense.
///
/// Two objects are equal when they hold the same keys with equal values,
/// whatever their order (RFC 8259 objects are unordered); iteration and
/// ``JSONValue/encoded(sortedKeys:)`` keep the order.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One member.
    public typealias Element = (key: String, value: JSONValue)

    /// The members in order.
    public let members: [Element]
    private let positions: [String: Int]

    /// The empty object.
    public init() {
        members = []
        positions = [:]
    }

    /// An object with these members, in this order.
    ///
    /// - Precondition: no two keys are equal.
    public init(uniqueKeysWithValues members: some Sequence<(String, JSONValue)>) {
        var list: [Element] = []
        var positions: [String: Int] = [:]
        for (key, value) in members {
            precondition(positions.updateValue(list.count, forKey: key) == nil, "duplicate key '\(key)' in JSONObject")
            list.append((key, value))
        }
        self.members = list
        self.positions = positions
    }

    /// An object with these members, in this order.
    ///
    /// - Precondition: no two keys are equal.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(uniqueKeysWithValues: elements)
    }

    /// Members the parser has already checked for duplicates.
    init(checkedMembers members: [Element], positions: [String: Int]) {
        self.members = members
        self.positions = positions
    }

    /// The value of the member named `key`, or `nil` when there is none.
    public subscript(key: String) -> JSONValue? {
        positions[key].map { members[$0].value }
    }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    /// The position of the first member: 0.
    public var startIndex: Int { 0 }
    /// The position after the last member: the number of members.
    public var endIndex: Int { members.count }
    /// The member at `position`, counting from 0 in document order.
    public subscript(position: Int) -> Element { members[position] }

    /// Whether both objects have the same keys with equal values, in any order.
    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.members.count == b.members.count else { return false }
        for (key, value) in a.members {
            guard let other = b[key], other == value else { return false }
        }
        return true
    }

    /// Hashes the members without regard to their order, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        // Order-independent, as equality is: a commutative sum of each
        // member's own hash.
        var sum = 0
        for (key, value) in members {
            var h = Hasher()
            h.combine(key)
            h.combine(value)
            sum = sum &+ h.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }
}
