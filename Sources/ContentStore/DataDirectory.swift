import Foundation

/// Finds the `data/` folder that seeds the database.
///
/// In order: `--data` or `DAILYVERSE_DATA`; `<prefix>/share/dailyverse/data` beside an installed binary;
/// a `data/` folder above the executable (a build in a clone) or above the working directory.
public enum DataDirectory {
    /// The file a data folder is known by.
    public static let marker = "calendar/months.json"

    public static func locate(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    )
        throws(StoreError) -> URL
    {
        if let path = explicit ?? environment["DAILYVERSE_DATA"], !path.isEmpty {
            let url = URL(fileURLWithPath: path)
            guard FileManager.default.fileExists(atPath: url.appendingPathComponent(marker).path) else {
                throw .notADataDirectory(path: path)
            }
            return url
        }
        var tried: [String] = []
        var candidates: [URL] = []
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        let binFolder = executable.deletingLastPathComponent()
        candidates.append(binFolder.deletingLastPathComponent().appendingPathComponent("share/dailyverse/data"))
        candidates += ancestors(of: binFolder).map { $0.appendingPathComponent("data") }
        candidates += ancestors(of: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).map {
            $0.appendingPathComponent("data")
        }
        for candidate in candidates {
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent(marker).path) { return candidate }
            tried.append(candidate.path)
        }
        throw .dataDirectoryNotFound(tried: Array(tried.prefix(4)))
    }

    private static func ancestors(of url: URL) -> [URL] {
        var result: [URL] = []
        var current = url.standardizedFileURL
        for _ in 0..<6 {
            result.append(current)
            let parent = current.deletingLastPathComponent()
            if parent.path == current.path { break }
            current = parent
        }
        return result
    }
}
