import Diagnostics
import Foundation
import VerseCalendar

/// Store failures, each a single line that names the value at fault.
public enum StoreError: UserFacingError, Equatable, Sendable {
    case cannotOpen(path: String, reason: String)
    case dataDirectoryNotFound(tried: [String])
    /// The data folder named (--data, DAILYVERSE_DATA, `data`, or a command's argument) is not one.
    case notADataDirectory(path: String)
    case missingDataFile(String)
    /// A file that is there but cannot be read as one: a folder, a FIFO, a device, a permission, over its size limit.
    case unreadableFile(InputFileError)
    case malformedLine(file: String, line: Int, reason: String)
    case malformedData(file: String, reason: String)
    case verseNotFound(String)
    case unknownTranslation(String)
    case unknownLayer(String)
    case unknownOccasion(String)
    case notSeeded(String)
    case invalidLayerSources(String)
    /// An import's edition id that the store holds as the other kind of text (a Quran text's id given to a
    /// translation, or a translation's to a Quran text): `kind` is the stored one's.
    case editionOfAnotherKind(id: String, kind: String)

    /// Why a folder named as the data folder is refused, without its name: said by this error and by the command line's.
    public static let notADataFolder = "not a data folder: it has no \(DataDirectory.marker)"

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open database '\(path)': \(reason)"
        case .dataDirectoryNotFound(let tried):
            "cannot find the data directory (set DAILYVERSE_DATA or --data); looked in: \(tried.joined(separator: ", "))"
        case .notADataDirectory(let path): "'\(path)' is \(Self.notADataFolder)"
        case .missingDataFile(let path): "missing data file '\(path)'"
        case .unreadableFile(let error): error.description
        case .malformedLine(let file, let line, let reason): "\(file):\(line): \(reason)"
        case .malformedData(let file, let reason): "\(file): \(reason)"
        case .verseNotFound(let key): "verse '\(key)' does not exist in the Quran"
        case .unknownTranslation(let id): "unknown translation '\(id)'"
        case .unknownLayer(let id):
            "unknown layer '\(id)': expected one of \(Layer.ids.joined(separator: ", "))"
        case .unknownOccasion(let id):
            "unknown occasion '\(id.prefix(60))': `dailyverse calendar` lists each year's occasions with their ids"
        case .notSeeded(let what): "the database has no \(what); run any command once to seed it"
        case .invalidLayerSources(let reason): "invalid layer sources: \(reason)"
        case .editionOfAnotherKind(let id, let kind):
            "edition '\(id)' is \(kind == "quran" ? "a Quran text" : "a translation"), not \(kind == "quran" ? "a translation" : "a Quran text"): "
                + "give --id an id of its own; nothing was imported"
        }
    }
}

extension StoreError {
    /// A data or import file that cannot be read as one: a missing file is `missingDataFile`; anything else that is
    /// not a regular file that can be read (a folder, a FIFO, a device, a symbolic link loop, a permission), or is
    /// over a limit, is `unreadableFile`; each names the file.
    init(_ error: InputFileError) {
        self = error.isMissing ? .missingDataFile(error.path) : .unreadableFile(error)
    }

    /// A data or import file read a line at a time (`body` gets each line's number and bytes); a failure is the
    /// StoreError that names the file (`name`) — `body`'s own, the file's, or any other as malformed data.
    static func forEachLine(
        of url: URL, name: String, maximumLineBytes: Int, _ body: (_ number: Int, _ line: ArraySlice<UInt8>) throws -> Void
    ) throws(StoreError) {
        do {
            try InputFile(path: url.path).forEachLine(maximumLineBytes: maximumLineBytes) { number, line, _ in try body(number, line) }
        } catch let error as StoreError {
            throw error
        } catch let error as InputFileError {
            throw StoreError(error)
        } catch {
            throw .malformedData(file: name, reason: "\(error)")
        }
    }

    /// A data or import file's bytes, at most `maximumBytes`.
    static func contents(of url: URL, maximumBytes: Int) throws(StoreError) -> Data {
        do {
            let file = try InputFile(path: url.path)
            return Data(try file.readAll(maximumBytes: maximumBytes))
        } catch {
            throw StoreError(error)
        }
    }
}
