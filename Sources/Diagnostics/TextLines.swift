/// A text file's lines as every reader of one takes them: without a byte-order mark at its start (some editors write
/// one), split at each line end, Linux's or Windows' (`"\r\n"` is one Character in Swift, never equal to `"\n"`: a
/// file split on `"\n"` alone was one line), each without a `"\r"` left at its end.
public enum TextLines {
    public static func of(_ text: String) -> [Substring] {
        let text = text.hasPrefix("\u{FEFF}") ? text.dropFirst() : text[...]
        return text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map {
            $0.hasSuffix("\r") ? $0.dropLast() : $0
        }
    }
}
