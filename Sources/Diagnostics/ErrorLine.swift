/// An error line as it is printed for a person: one line, of a size to read, that cannot drive the terminal.
///
/// Messages quote the value at fault (`invalid verse '…'`, `unknown time zone '…'`, `invalid --name "…"`), and a value
/// is whatever was given: a 120 KB argument was echoed whole, and an escape sequence in it reached the terminal as one.
/// The edge that prints errors passes each line through `shortened` once, rather than every message cutting its own.
public enum ErrorLine {
    /// The characters of a quoted value shown before it is cut: enough for a path named whole (a database, a file to
    /// import, in a temporary folder), far short of a value no one could read.
    public static let valueLimit = 200
    /// The characters of a line past which its middle is cut (a value given unquoted).
    public static let lineLimit = 1000

    /// `line` as it is printed: each quoted value ('…' or "…") over `valueLimit` characters cut to its first
    /// `valueLimit` and "… (N bytes)"; control characters and bidirectional overrides written as `\u{1B}`; a line
    /// still over `lineLimit` characters cut in its middle, saying how much was left out.
    public static func shortened(_ line: String) -> String {
        let characters = Array(line)
        var out = ""
        var index = 0
        // A quote with no close after it has none after any later place either: once one is found unclosed, that kind
        // of quote is not looked for again (each would scan the rest of the line: a line of many `"` took quadratic time).
        var unclosed: Set<Character> = []
        while index < characters.count {
            let character = characters[index]
            if character == "'" || character == "\"", !unclosed.contains(character), opens(characters, at: index) {
                if let close = closing(characters, of: index) {
                    out.append(character)
                    out += cut(String(characters[(index + 1)..<close]))
                    out.append(character)
                    index = close + 1
                    continue
                }
                unclosed.insert(character)
            }
            out.append(character)
            index += 1
        }
        out = escaped(out)
        guard out.count > lineLimit else { return out }
        let head = String(out.prefix(lineLimit * 2 / 3)), tail = String(out.suffix(lineLimit / 4))
        return head + " … (\(out.utf8.count - head.utf8.count - tail.utf8.count) bytes left out) … " + tail
    }

    /// A value, cut as a quoted value in `shortened` is.
    public static func cut(_ value: String) -> String {
        value.count > valueLimit ? String(value.prefix(valueLimit)) + "… (\(value.utf8.count) bytes)" : value
    }

    /// `text` with control characters and bidirectional formatting characters as `\u{…}`, every other character as it
    /// is.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { ImportedText.isControl($0) || ImportedText.isBidirectionalFormatting($0) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if ImportedText.isControl(scalar) || ImportedText.isBidirectionalFormatting(scalar) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// A quote opens a value where no letter or digit comes just before it (`work's` is an apostrophe).
    static func opens(_ characters: [Character], at index: Int) -> Bool {
        index == 0 || !(characters[index - 1].isLetter || characters[index - 1].isNumber)
    }

    /// Where the value opened at `start` closes: the same quote, not escaped by a backslash, with no letter or digit
    /// just after it; nil when none does.
    static func closing(_ characters: [Character], of start: Int) -> Int? {
        let quote = characters[start]
        var index = start + 1
        while index < characters.count {
            if characters[index] == quote, characters[index - 1] != "\\",
                index + 1 == characters.count || !(characters[index + 1].isLetter || characters[index + 1].isNumber)
            {
                return index
            }
            index += 1
        }
        return nil
    }
}
