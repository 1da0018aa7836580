/// Numbers as the inputs write them: ASCII digits alone, read before any arithmetic.
public enum Digits {
    /// A whole number in `range` written as digits alone (no sign, no space, no more digits than the range's upper
    /// bound has); nil otherwise.
    public static func wholeNumber(_ text: some StringProtocol, in range: ClosedRange<Int>) -> Int? {
        guard (1...String(range.upperBound).count).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }),
            let value = Int(String(text)), range.contains(value)
        else { return nil }
        return value
    }
}
