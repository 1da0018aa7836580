import Diagnostics
import Foundation

/// Where the database is: a file for SQLite (the default: nothing to set up), or a PostgreSQL server named by a
/// `postgresql://` address.
public enum DatabaseLocation: Sendable, Equatable {
    case sqlite(path: String)
    case postgres(PostgresAddress)

    /// A plain path is a SQLite file; `postgresql://…` or `postgres://…` is a PostgreSQL server. Any other address
    /// (`postgresq://…`, `mysql://…`) is refused, its password hidden, rather than taken for a file's name.
    public init(_ text: String) throws(StorageError) {
        if PostgresAddress.looksLikeAddress(text) {
            self = .postgres(try PostgresAddress(text))
        } else if !text.contains("://"), let scheme = ["postgresql:", "postgres:"].first(where: { text.lowercased().hasPrefix($0) }) {
            // `postgresql:/u:pw@host/db`, a slash short: an address mistyped, not a file of that name; not shown, as it
            // may hold a password.
            throw .badAddress(address: scheme + "…", reason: "an address begins postgresql:// (or postgres://), with two slashes")
        } else if text.contains("://") {
            throw .badAddress(
                address: PostgresAddress.redacted(text),
                reason: "a database is a postgresql:// (or postgres://) address, or the path of a SQLite file")
        } else {
            self = .sqlite(path: text)
        }
    }
}

/// A PostgreSQL server and database, from an address as libpq reads it:
/// `postgresql://USER@HOST:PORT/DATABASE?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem`.
///
/// The address never carries the password: it is shown in logs, in `status` and in error messages, so a password in
/// it is refused. The password comes from the systemd credential `database-password`, `PGPASSWORD` or a passfile
/// (`PostgresPassword`). The parameters are libpq's names: `sslmode`, `sslrootcert`, `passfile`, `application_name`,
/// `connect_timeout`, `host` for a Unix socket's folder, and the TCP keep-alive's `keepalives`, `keepalives_idle`,
/// `keepalives_interval`, `keepalives_count` and `tcp_user_timeout` (`TCPKeepAlive`).
public struct PostgresAddress: Sendable, Equatable, CustomStringConvertible {
    /// How the connection uses TLS, with libpq's names and meanings.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Never.
        case disable
        /// When the server offers it, without checking its certificate (libpq's default).
        case prefer
        /// Always, without checking the certificate (or checking its chain, as `verify-ca`, when `sslrootcert` is
        /// given, as libpq does).
        case require
        /// Always, checking that the certificate chains to the CA file (or the system's roots), not its name.
        case verifyCA = "verify-ca"
        /// Always, checking the chain and that the certificate names the host.
        case verifyFull = "verify-full"
    }

    /// The server's host name or address; nil with `socketFolder`.
    public var host: String?
    /// The folder of the server's Unix socket (`?host=/var/run/postgresql`), for peer authentication.
    public var socketFolder: String?
    public var port: Int
    public var user: String
    public var database: String
    public var tlsMode: TLSMode
    /// The CA certificates (PEM) that `verify-ca` and `verify-full` trust instead of the system's.
    public var caFile: String?
    /// The chain ends at the system's roots (`sslrootcert=system`, with `verify-full`).
    public var systemRoots = false
    /// A passfile other than `PGPASSFILE` or `~/.pgpass`.
    public var passfile: String?
    public var applicationName: String
    /// Seconds to wait for the server to answer a connection.
    public var connectTimeout: Int
    /// How a connection notices a server or a network gone without a word; nil over a Unix socket (as libpq).
    public var keepAlive: TCPKeepAlive?

    /// The parameters an address may carry.
    public static let parameters =
        ["sslmode", "sslrootcert", "passfile", "application_name", "connect_timeout", "host"] + TCPKeepAlive.parameters

    public static func looksLikeAddress(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// Parses `text`, refusing anything libpq would read otherwise or we cannot honour, in one line that names the
    /// bad part (and never the password).
    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(StorageError) {
        let shown = Self.redacted(text)
        func bad(_ reason: String) -> StorageError { .badAddress(address: shown, reason: reason) }
        // Before anything is read of it: what follows might name a part of the password (a parameter, a fragment).
        if shown != text {
            throw bad(
                "it carries a password, which would be shown wherever the address is; give the password in PGPASSWORD, a passfile or the systemd credential 'database-password'"
            )
        }
        // A line break from a botched variable, or bytes that are not UTF-8 (read as U+FFFD): percent-encoded by the
        // parser below, they would name a database or a host no one meant.
        if text.unicodeScalars.contains(where: { $0 == "\u{FFFD}" || $0.properties.generalCategory == .control }) {
            throw bad("it holds a control character (a newline?) or bytes that are not UTF-8")
        }
        guard Self.looksLikeAddress(text), let components = URLComponents(string: text) else {
            throw bad("expected postgresql://USER@HOST:PORT/DATABASE")
        }
        guard let user = components.user, !user.isEmpty else { throw bad("it names no user (postgresql://USER@HOST/DATABASE)") }
        let name = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !name.isEmpty, !name.contains("/") else { throw bad("it names no database (postgresql://USER@HOST/DATABASE)") }
        if let fragment = components.fragment { throw bad("unexpected '#\(fragment)'") }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard Self.parameters.contains(item.name) else {
                throw bad("unknown parameter '\(item.name)' (known: \(Self.parameters.joined(separator: ", ")))")
            }
            guard query[item.name] == nil else { throw bad("parameter '\(item.name)' given twice") }
            query[item.name] = item.value ?? ""
        }
        self.user = user.removingPercentEncoding ?? user
        database = name.removingPercentEncoding ?? name
        // An IPv6 host is written in brackets; Foundation keeps them on some platforms.
        host = components.host.flatMap { $0.isEmpty ? nil : $0.hasPrefix("[") && $0.hasSuffix("]") ? String($0.dropFirst().dropLast()) : $0 }
        if let host, host.contains(",") { throw bad("several hosts are not supported: put one host, or a proxy in front of them") }
        if let folder = query["host"] {
            guard folder.hasPrefix("/") else { throw bad("host='\(folder)': a parameter 'host' is a Unix socket's folder, an absolute path") }
            guard host == nil else { throw bad("a host in the address and a socket folder in 'host' both given; give one") }
            socketFolder = folder
        } else {
            guard host != nil else { throw bad("it names no host (postgresql://USER@HOST/DATABASE, or ?host=/socket/folder)") }
            socketFolder = nil
        }
        port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw bad("port \(port) is not between 1 and 65535") }
        let mode = query["sslmode"] ?? environment["PGSSLMODE"] ?? "prefer"
        if mode == "allow" {
            tlsMode = .prefer
        } else if let known = TLSMode(rawValue: mode) {
            tlsMode = known
        } else {
            throw bad("sslmode='\(mode)' is not one of disable, allow, prefer, require, verify-ca, verify-full")
        }
        // The chain ends where libpq ends it: at `sslrootcert`, else at ~/.postgresql/root.crt if there is one; the
        // system's roots only when asked for (`sslrootcert=system`, PostgreSQL 16's spelling), and then only with the
        // host name checked, since any certificate a public authority issued would pass a weaker check. A verifying
        // mode with no root at all is refused (it trusted the system's roots, where libpq refuses).
        let root = query["sslrootcert"] ?? environment["PGSSLROOTCERT"]
        if socketFolder != nil {
            // A Unix socket has no TLS: libpq ignores its settings there (a verifying mode written for it is refused below).
            caFile = nil
            systemRoots = false
        } else if root == "system" {
            if let asked = query["sslmode"] ?? environment["PGSSLMODE"], asked != "verify-full" {
                throw bad("sslrootcert=system needs sslmode=verify-full (its default): with '\(asked)' any publicly issued certificate would pass")
            }
            tlsMode = .verifyFull
            caFile = nil
            systemRoots = true
        } else {
            let home = environment["HOME"].map { $0 + "/.postgresql/root.crt" }
            caFile = root ?? home.flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
            systemRoots = false
            if let caFile, !caFile.hasPrefix("/") { throw bad("sslrootcert='\(caFile)' is not an absolute path") }
            if tlsMode == .require, caFile != nil { tlsMode = .verifyCA }
            if caFile == nil, socketFolder == nil, tlsMode == .verifyCA || tlsMode == .verifyFull {
                throw bad(
                    "sslmode=\(tlsMode.rawValue) needs the server's root certificate: sslrootcert=/path/to/ca.pem (or ~/.postgresql/root.crt), or sslrootcert=system for the system's roots with verify-full"
                )
            }
        }
        if socketFolder != nil, tlsMode == .verifyCA || tlsMode == .verifyFull {
            throw bad("sslmode=\(tlsMode.rawValue) over a Unix socket: TLS is for a host")
        }
        passfile = query["passfile"]
        if let passfile, !passfile.hasPrefix("/") { throw bad("passfile='\(passfile)' is not an absolute path") }
        applicationName = query["application_name"] ?? "dailyverse"
        let timeout = query["connect_timeout"] ?? environment["PGCONNECT_TIMEOUT"] ?? "10"
        guard let seconds = Int(timeout), (1...600).contains(seconds) else {
            throw bad("connect_timeout='\(timeout)' is not a whole number of seconds from 1 to 600")
        }
        connectTimeout = seconds
        let keepAlive: TCPKeepAlive
        do { keepAlive = try TCPKeepAlive(parameters: query) } catch { throw bad(error.reason) }
        self.keepAlive = socketFolder == nil ? keepAlive : nil
    }

    /// Whether a password sent here could go to whoever stands between: the server is reached over a network and its
    /// certificate is not checked (`disable`, `prefer`, `require`; a CA file makes `require` check it, as `verify-ca`),
    /// so an attacker on the path can offer none, or any, and ask for the password in clear, as libpq allows too. A
    /// Unix socket or loopback is not.
    public var exposesPassword: Bool {
        if socketFolder != nil { return false }
        if let host, host == "localhost" || host == "::1" || host.hasPrefix("127.") { return false }
        return tlsMode != .verifyCA && tlsMode != .verifyFull
    }

    /// The address as it can be shown: no password (it carries none), the parameters that change behaviour.
    public var description: String {
        var text = "postgresql://\(Self.encode(user))@\(host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? ""):\(port)/\(Self.encode(database))"
        var parameters = ["sslmode=\(tlsMode.rawValue)"]
        if let socketFolder { parameters.append("host=\(socketFolder)") }
        if let caFile { parameters.append("sslrootcert=\(caFile)") }
        if systemRoots { parameters.append("sslrootcert=system") }
        if let keepAlive { parameters += keepAlive.parametersShown }
        text += "?" + parameters.joined(separator: "&")
        return text
    }

    /// `text` with any password replaced by `***`, for messages about an address we refuse: in the user part, from
    /// the `:` before the first `@` to the last `@` (a password may hold `/`, `?`, `#` or `@` itself); as a
    /// `password` parameter, from its value to the end. More is hidden than needed when a parameter holds an `@` too,
    /// never less.
    public static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://") else { return text }
        var rest = text[scheme.upperBound...]
        if let parameter = rest.range(of: "?password=") ?? rest.range(of: "&password=") {
            rest = rest[..<parameter.upperBound] + "***"
        }
        if let first = rest.firstIndex(of: "@"), let colon = rest[..<first].firstIndex(of: ":"), let last = rest.lastIndex(of: "@") {
            rest = rest[..<colon] + ":***" + rest[last...]
        }
        return String(text[..<scheme.upperBound] + rest)
    }

    private static func encode(_ part: String) -> String {
        part.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@/"))) ?? part
    }
}

/// Where the password for a PostgreSQL address comes from, in order: the systemd credential `database-password`
/// (`LoadCredential=database-password:/etc/dailyverse/database-password` in the unit), `PGPASSWORD`, then the passfile
/// (`passfile` in the address, `PGPASSFILE`, else `~/.pgpass`), as libpq reads it. No password at all is fine: the
/// server may trust the peer or a certificate.
public enum PostgresPassword {
    /// The name of the systemd credential the password is read from.
    public static let credentialName = "database-password"

    public static func resolve(
        for address: PostgresAddress, environment: [String: String] = ProcessInfo.processInfo.environment
    )
        throws(StorageError) -> String?
    {
        if let folder = environment["CREDENTIALS_DIRECTORY"], !folder.isEmpty {
            let path = folder + "/" + credentialName
            if FileManager.default.fileExists(atPath: path) {
                return try text(of: path, source: "the credential '\(path)'").trimmingCharacters(in: .newlines)
            }
        }
        if let password = environment["PGPASSWORD"] { return password }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let explicit = address.passfile ?? environment["PGPASSFILE"]
        let path = explicit ?? home + "/.pgpass"
        guard FileManager.default.fileExists(atPath: path) else {
            if let explicit { throw .badPassword(source: "the passfile '\(explicit)'", reason: "it does not exist") }
            return nil
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw .badPassword(source: "the passfile '\(path)'", reason: String(cString: strerror(errno))) }
        let kind = FileKind(mode: info.st_mode)
        guard kind == .regular else { throw .badPassword(source: "the passfile '\(path)'", reason: kind.refusal(wanted: .regular)) }
        // libpq ignores a passfile others can read; saying so is kinder than a failed login.
        guard info.st_mode & 0o077 == 0 else {
            throw .badPassword(
                source: "the passfile '\(path)'",
                reason: "others can read it (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it, as libpq requires")
        }
        return passfileEntry(try text(of: path, source: "the passfile '\(path)'"), for: address)
    }

    /// The largest password file read (a credential or a passfile): far more than any holds.
    static let maximumFileBytes = 1 << 20

    /// The text of a password file, read as every file handed to the program is (`InputFile`: a FIFO or a device is
    /// refused, not waited on or read without end; at most `maximumFileBytes`).
    private static func text(of path: String, source: String) throws(StorageError) -> String {
        let bytes: [UInt8]
        do { bytes = try InputFile.contents(of: path, maximumBytes: maximumFileBytes) } catch {
            throw .badPassword(source: source, reason: error.reason)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .badPassword(source: source, reason: "it is not UTF-8 text") }
        return text
    }

    /// The password of the first line of a passfile (`host:port:database:user:password`, `*` matching anything,
    /// `\:` and `\\` escaped) that matches `address`. A socket matches `localhost`, as in libpq.
    static func passfileEntry(_ text: String, for address: PostgresAddress) -> String? {
        let host = address.host ?? "localhost"
        let wanted = [host, String(address.port), address.database, address.user]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            var fields: [String] = []
            var field = ""
            var escaped = false
            for character in line {
                if escaped {
                    field.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == ":", fields.count < 4 {
                    fields.append(field)
                    field = ""
                } else {
                    field.append(character)
                }
            }
            fields.append(field)
            guard fields.count == 5 else { continue }
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }
}
