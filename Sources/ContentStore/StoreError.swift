import Diagnostics
import VerseCalendar

/// Store failures, each a single line that names the value at fault.
public enum StoreError: UserFacingError, Equatable, Sendable {
    case cannotOpen(path: String, reason: String)
    case dataDirectoryNotFound(tried: [String])
    case missingDataFile(String)
    case malformedLine(file: String, line: Int, reason: String)
    case malformedData(file: String, reason: String)
    case verseNotFound(String)
    case unknownTranslation(String)
    case unknownLayer(String)
    case notSeeded(String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open database '\(path)': \(reason)"
        case .dataDirectoryNotFound(let tried):
            "cannot find the data directory (set DAILYVERSE_DATA or --data); looked in: \(tried.joined(separator: ", "))"
        case .missingDataFile(let path): "missing data file '\(path)'"
        case .malformedLine(let file, let line, let reason): "\(file):\(line): \(reason)"
        case .malformedData(let file, let reason): "\(file): \(reason)"
        case .verseNotFound(let key): "verse '\(key)' does not exist in the Quran"
        case .unknownTranslation(let id): "unknown translation '\(id)'"
        case .unknownLayer(let id):
            "unknown layer '\(id)': expected one of \(Layer.ids.joined(separator: ", "))"
        case .notSeeded(let what): "the database has no \(what); run any command once to seed it"
        }
    }
}
