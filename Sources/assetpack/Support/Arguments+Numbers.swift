extension Arguments {
    /// The option's value as a number more than 0, if given; a usage error
    /// when it is not one.
    func positiveNumber(_ option: Option) throws(CLIError) -> Double? {
        guard let value = try number(option) else { return nil }
        guard value > 0 else { throw .usage("'\(option.longSpelling)' must be more than 0") }
        return value
    }

    /// The option's value as a whole number from `range` (digits only, as
    /// ``wholeNumber(_:maximum:)`` reads them), if given; a usage error
    /// naming the range when it is not one.
    func wholeNumber(_ option: Option, in range: ClosedRange<Int>) throws(CLIError) -> Int? {
        precondition(range.lowerBound >= 0, "a whole-number range starts at 0 or more")
        let refusal = CLIError.usage("'\(option.longSpelling)' needs a whole number from \(range.lowerBound) to \(range.upperBound)")
        let value: UInt64?
        do { value = try wholeNumber(option, maximum: UInt64(range.upperBound)) } catch { throw refusal }
        guard let value else { return nil }
        guard value >= UInt64(range.lowerBound) else { throw refusal }
        return Int(value)
    }
}
